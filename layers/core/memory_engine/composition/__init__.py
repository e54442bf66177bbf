"""The composition: the engine and the key machinery assembled from the settings through one
factory map per kind of adapter (`providers`), once per process. The only room that knows every
adapter; nothing below imports it."""
