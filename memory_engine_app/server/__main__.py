from memory_engine_app.server.app import serve

if __name__ == "__main__":
    serve()
