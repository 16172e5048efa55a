"""Downloads against a local HTTP server on 127.0.0.1: pinned sha256, atomic cache, tiktoken's
cache layout, and clear errors."""

from __future__ import annotations

import hashlib
import http.server
import socket
import tempfile
import threading
from pathlib import Path

import pytest

import tokenmill
from tokenmill import pretrained
from tokenmill.formats import openai, rankfile

VOCAB = rankfile.dump_ranks([bytes([b]) for b in range(256)] + [b"he", b"ll", b"hell", b"hello"])
DIGEST = hashlib.sha256(VOCAB).hexdigest()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "tiny.tiktoken").write_bytes(VOCAB)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(root), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.RequestHandlerClass.log_message = lambda *a: None  # type: ignore[method-assign]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def caches(tmp_path, monkeypatch):
    ours, theirs = tmp_path / "cache", tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TOKENMILL_CACHE_DIR", str(ours))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(theirs))
    return ours, theirs


def cache_key(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


def test_good_file_is_downloaded_once_and_cached(server, caches):
    url = f"{server}/tiny.tiktoken"
    assert pretrained.fetch(url, DIGEST) == VOCAB
    assert (caches[0] / cache_key(url)).read_bytes() == VOCAB
    assert [p.name for p in caches[0].iterdir()] == [cache_key(url)]  # no temp files left


def test_cache_is_used_offline(server, caches):
    url = f"{server}/tiny.tiktoken"
    pretrained.fetch(url, DIGEST)
    (Path(caches[0]).parent / "www" / "tiny.tiktoken").unlink()  # the server no longer has it
    assert pretrained.fetch(url, DIGEST) == VOCAB


def test_wrong_hash_raises_and_caches_nothing(server, caches):
    url = f"{server}/tiny.tiktoken"
    with pytest.raises(tokenmill.HashMismatchError, match="nothing was cached"):
        pretrained.fetch(url, "0" * 64)
    assert not caches[0].exists() or not any(caches[0].iterdir())


def test_corrupt_cache_entry_is_replaced(server, caches):
    url = f"{server}/tiny.tiktoken"
    caches[0].mkdir(parents=True)
    (caches[0] / cache_key(url)).write_bytes(b"garbage")
    assert pretrained.fetch(url, DIGEST) == VOCAB
    assert (caches[0] / cache_key(url)).read_bytes() == VOCAB


def test_server_down_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    url = f"http://127.0.0.1:{port}/tiny.tiktoken"
    with pytest.raises(tokenmill.DownloadError, match="could not download") as err:
        pretrained.fetch(url, DIGEST, timeout=5)
    assert url in str(err.value) and "TOKENMILL_CACHE_DIR" in str(err.value)
    assert isinstance(err.value, OSError)


def test_http_error_status(server):
    with pytest.raises(tokenmill.DownloadError, match="404"):
        pretrained.fetch(f"{server}/missing.tiktoken", DIGEST)


@pytest.mark.parametrize("where", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "default"])
def test_tiktoken_cache_layout_is_read(tmp_path, monkeypatch, where):
    # Each folder tiktoken may cache in, chosen as tiktoken chooses it.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    folder = tmp_path / "tmp" / "data-gym-cache"
    if where != "default":
        folder = tmp_path / where
        monkeypatch.setenv(where, str(folder))
    url = "https://example.invalid/encodings/tiny.tiktoken"
    folder.mkdir(parents=True)
    (folder / cache_key(url)).write_bytes(VOCAB)
    assert pretrained.fetch(url, DIGEST) == VOCAB  # no network involved


def test_an_empty_tiktoken_cache_dir_turns_its_cache_off(server, tmp_path, monkeypatch):
    # tiktoken then caches nowhere, and does not fall back to DATA_GYM_CACHE_DIR.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "data-gym"))
    url = f"{server}/gone.tiktoken"
    (tmp_path / "data-gym").mkdir()
    (tmp_path / "data-gym" / cache_key(url)).write_bytes(VOCAB)
    assert pretrained.tiktoken_cache_dirs() == []
    with pytest.raises(tokenmill.DownloadError, match="404"):
        pretrained.fetch(url, DIGEST)


def test_load_url_and_named_download(server, monkeypatch):
    url = f"{server}/tiny.tiktoken"
    tok = tokenmill.load(url, pattern="gpt2", sha256=DIGEST)
    assert tok.encode("hello hell") == [259, 32, 258]
    spec = openai.Pretrained("tiny_base", url, DIGEST, "gpt2", {"<|endoftext|>": 260}, 261)
    monkeypatch.setitem(openai.REGISTRY, "tiny_base", spec)
    tok = tokenmill.load("tiny_base")
    assert tok.encode("hello<|endoftext|>", allowed_special="all") == [259, 260]
    assert tok.n_vocab == 261
