"""Build-time tools (model export). Never imported by a handler."""
