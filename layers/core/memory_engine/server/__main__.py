from memory_engine.server.app import serve

if __name__ == "__main__":
    serve()
