"""The protocol card hashes the files a run reads, streamed; nothing else under the data folder (issue 22)."""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import shutil
from pathlib import Path

from kweval.data import demo_path
from kweval.data.inputs import input_files
from kweval.io import card as cards

DATA = Path(__file__).parent / "data"


def _collection(folder: Path) -> Path:
    for sub in ("docsutf8", "keys"):
        (folder / sub).mkdir(parents=True)
    (folder / "docsutf8" / "d1.txt").write_text("Topic models of text.\n")
    (folder / "keys" / "d1.key").write_text("topic models\n")
    return folder


def _hostile_neighbours(folder: Path) -> Path:
    """An unrelated big file, a dangling link, a link loop and an unreadable file beside the data."""
    big = folder / "archive.bin"
    with open(big, "wb") as handle:
        handle.truncate(64 << 20)  # sparse: 64 MiB that would all be read by a hash of every file
    os.symlink(folder / "missing", folder / "dangling")
    os.symlink(folder / "loop", folder / "loop")
    secret = folder / "secret.txt"
    secret.write_text("private")
    secret.chmod(0)
    return big


def test_an_unrelated_file_is_neither_read_nor_hashed(tmp_path, monkeypatch):
    clean = _collection(tmp_path / "clean")
    data = _collection(tmp_path / "data")
    big = _hostile_neighbours(data)
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    digest = cards.dataset_hash(data)
    monkeypatch.undo()
    assert str(big) not in opened and not any("secret" in name for name in opened)
    assert digest == cards.dataset_hash(clean)
    by_hand = hashlib.sha256(b"docsutf8/d1.txt\0Topic models of text.\n" + b"keys/d1.key\0topic models\n")
    assert digest == by_hand.hexdigest()
    assert [p.name for p in input_files(data)] == ["d1.txt", "d1.key"]
    (data / "predictions.csv").write_text("review_id,model,keyword\nd1,m,topic models\n")  # read beside docsutf8/
    assert [p.name for p in input_files(data)] == ["d1.txt", "d1.key", "predictions.csv"]


def test_files_hash_streams_in_chunks_and_names_an_unreadable_input(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (3 * cards.CHUNK + 5))
    reads: list[int] = []
    real_open = builtins.open

    class Counting:
        def __init__(self, handle):
            self.handle = handle

        def read(self, size=-1):
            reads.append(size)
            return self.handle.read(size)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: Counting(real_open(f, *a, **k)))
    digest = cards.files_hash([path], tmp_path)
    monkeypatch.undo()
    assert reads and max(reads) == cards.CHUNK and -1 not in reads  # never the whole file at once
    assert digest == hashlib.sha256(b"big.txt\0" + path.read_bytes()).hexdigest()
    gone = tmp_path / "gone.txt"
    assert cards.files_hash([gone], tmp_path) == hashlib.sha256(b"gone.txt\0\0unreadable\0").hexdigest()


def test_cli_card_of_a_folder_with_hostile_neighbours(tmp_path, capsys):
    from kweval.cli import main

    data = tmp_path / "demo"
    shutil.copytree(demo_path(), data)
    assert main(["evaluate", str(data), "--format", "json"]) == 0
    before = json.loads(capsys.readouterr().out)["meta"]["protocol"]["dataset_sha256"]
    _hostile_neighbours(data)
    status = main(["evaluate", str(data), "--format", "json"])
    out, err = capsys.readouterr()
    assert status == 0 and "Traceback" not in err
    card = json.loads(out)["meta"]["protocol"]
    assert card["dataset_sha256"] == before
    assert card["dataset_sha256"] == cards.files_hash(sorted(data.glob("*.parquet")), data)


def test_card_names_the_nltk_version():
    from kweval.text.stemming import nltk_version

    version = nltk_version()
    assert version != "unknown"
    for preset in ("pke", "kpeval", "meng"):
        assert cards.protocol_card(preset, "d", "h")["stemming"] == f"Porter (NLTK {version})"
    assert cards.protocol_card("kweval", "d", "h", match="stem")["stemming"] == f"Porter (NLTK {version})"
    assert cards.protocol_card("kweval", "d", "h", match="approx")["stemming"] == "none"
