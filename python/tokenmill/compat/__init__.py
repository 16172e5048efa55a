"""Drop-in replacements for other libraries' APIs (``tokenmill.compat.tiktoken``)."""
