"""``tokenmill serve``: a tokenizer playground in the browser, and the JSON API behind it.

:mod:`tokenmill.serve.api` answers the API as plain functions over a
:class:`~tokenmill.serve.api.Playground`; :mod:`tokenmill.serve.server` is the HTTP server;
``static/`` holds the page. Nothing is imported here, so ``tokenmill --help`` stays fast.
"""
