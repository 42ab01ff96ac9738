"""Reader for the keyphrase-generation JSON layout (OpenNMT-kpg, Meng et al. 2017, KP20k-style sets).

One JSON object a document, as JSON lines or one JSON array::

    {"id": "...", "title": "...", "abstract": "...", "keywords": "kp1;kp2;..."}

`keywords` is a `;`-joined string or a list of strings: the document's
unranked gold.  The text is the title and the abstract, one line each
(`title + "\\n" + abstract`; the title is kept apart too, for rules that need
it, such as OpenNMT-kpg's `title + "." + abstract`).  A document's id is its
`id` field, else its `name` field (the public Inspec/KP20k files of
EMBEDDIA/tnt_kid carry `name`), else `<file name without suffix>-<line>` (the
1-based line of a JSON-lines file, or the 1-based position in an array): stable
as long as the file is.  A `.json`/`.jsonl` file is one collection (named by
the file), a folder of them one collection per file.  Every bad line, field or
file is one `Problem`; the rest is read.  Plain Python (the `--protocol` path
reads through this).
"""

from __future__ import annotations

import json
from pathlib import Path

from kweval.data.dataset import Dataset, Problem, texts_of
from kweval.data.keyphrase import Documents

SUFFIXES = (".json", ".jsonl")
ID_FIELDS = ("id", "name")
KEYWORDS_FIELD = "keywords"
KEYWORD_SEPARATOR = ";"
_MAX_PROBLEMS = 20  # bad records named one by one per file; the rest are counted


def layout_files(path: Path) -> list[Path]:
    """The layout's files at `path`: the file itself (a .json/.jsonl), or a folder's .json/.jsonl files by name."""
    if path.is_file():
        return [path] if path.suffix.lower() in SUFFIXES else []
    try:
        return sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES and p.is_file())
    except OSError:
        return []


def looks_like_meng(path: Path) -> bool:
    """Whether a folder holds a .json/.jsonl file whose first record has `keywords` and a `title` or `abstract`."""
    for file in layout_files(path):
        decoded = _first_record(file)
        if isinstance(decoded, dict) and KEYWORDS_FIELD in decoded and ({"title", "abstract"} & set(decoded)):
            return True
    return False


def holds_predictions(file: Path) -> bool:
    """Whether a .json/.jsonl file's first record is a document's predictions (`keyphrases` or `predictions`, no
    `keywords`: kweval.data.predictions' layout), so the file is no collection."""
    from kweval.data.predictions import KEYPHRASE_KEYS

    decoded = _first_record(file)
    return isinstance(decoded, dict) and KEYWORDS_FIELD not in decoded and bool(set(KEYPHRASE_KEYS) & set(decoded))


def _first_record(file: Path) -> object:
    """The first JSON value of a file's first 64 KiB (of an array: its first item); None when there is none."""
    try:
        with file.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return _first_object(text[1:].lstrip() if text.startswith("[") else text)


def _first_object(text: str) -> object:
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except (ValueError, RecursionError):
        return None


def _records(path: Path, problems: list[Problem]) -> tuple[str, list[tuple[int, object]]] | None:
    """("line" or "position", [(1-based line or position, decoded value)]); None (reported) if unreadable."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(str(path), f"unreadable ({exc.strerror or type(exc).__name__}); skipped"))
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(Problem(str(path), "not valid UTF-8; undecodable bytes replaced"))
        text = raw.decode("utf-8-sig", errors="replace")
    replaced = [0]  # strings with lone surrogates (a JSON "\\udc80"): no table can store them
    if text.lstrip().startswith("["):
        try:
            values = texts_of(json.loads(text), replaced)
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(str(path), f"a JSON array that is not valid JSON ({str(exc)[:80]}); skipped"))
            return None
        _say_replaced(path, replaced, problems)
        return "position", list(enumerate(values, start=1)) if isinstance(values, list) else [(1, values)]
    records: list[tuple[int, object]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, texts_of(json.loads(line), replaced)))
        except (ValueError, RecursionError) as exc:
            records.append((number, _BadJSON(str(exc)[:80])))
    _say_replaced(path, replaced, problems)
    return "line", records


def _say_replaced(path: Path, replaced: list[int], problems: list[Problem]) -> None:
    if replaced[0]:
        problems.append(
            Problem(str(path), f"{replaced[0]} string(s) with lone surrogates (not text); replaced by U+FFFD")
        )


class _BadJSON(str):
    """A record that did not parse (its message)."""


def _keywords(value: object) -> tuple[list[str], int] | None:
    """(the phrases as written, how many list items were not strings); None when not a string or a list."""
    if isinstance(value, str):
        return value.split(KEYWORD_SEPARATOR), 0
    if isinstance(value, list):
        phrases = [v for v in value if isinstance(v, str)]
        return phrases, len(value) - len(phrases)
    return None


def _text_field(record: dict, name: str, bad: list[str], where: str) -> str:
    value = record.get(name, "")
    if isinstance(value, str):
        return value
    bad.append(f"{where}: `{name}` is not a string; read as empty")
    return ""


def read_file(path: Path, problems: list[Problem], name: str | None = None) -> Documents:
    """One file as a collection: texts (title + "\\n" + abstract), titles, gold phrases by document id.

    A repeated id is reported and its later record skipped.  A record with
    neither `title` nor `abstract` is read without text (reported).
    """
    taken: set[str] = set()
    texts: dict[str, str] = {}
    titles: dict[str, str] = {}
    keys: dict[str, list[str]] = {}
    raw_keys: dict[str, list[str]] = {}
    bad: list[str] = []
    unit, records = _records(path, problems) or ("line", None)
    for number, record in records or []:
        where = f"{unit} {number}"
        if isinstance(record, _BadJSON):
            bad.append(f"{where}: not JSON ({record}); skipped")
            continue
        if not isinstance(record, dict):
            bad.append(f"{where}: not a JSON object; skipped")
            continue
        found = _keywords(record.get(KEYWORDS_FIELD))
        if found is None:
            reason = "no `keywords`" if KEYWORDS_FIELD not in record else "`keywords` is not a string or a list"
            bad.append(f"{where}: {reason}; skipped")
            continue
        phrases, not_strings = found
        if not_strings:
            bad.append(f"{where}: {not_strings} keyword(s) that are not strings left out")
        doc = _document_id(record, path, number)
        if doc in taken:
            bad.append(f"{where}: document {doc} again; the first wins")
            continue
        taken.add(doc)
        if "title" not in record and "abstract" not in record:
            bad.append(f"{where}: no `title` or `abstract`; document {doc} has no text")
        title = _text_field(record, "title", bad, where)
        abstract = _text_field(record, "abstract", bad, where)
        texts[doc] = "\n".join(part for part in (title, abstract) if part)
        titles[doc] = title
        raw_keys[doc] = phrases
        keys[doc] = [p.strip() for p in phrases if p.strip()]
        if not keys[doc]:
            bad.append(f"{where}: document {doc} holds no keyphrase; it has no ground truth")
    if records is not None and not texts and not bad:
        problems.append(Problem(str(path), "holds no document"))
    _report(path, bad, problems)
    return Documents(name or path.stem, texts, keys, None, (path,), raw_keys=raw_keys, titles=titles)


def _document_id(record: dict, path: Path, number: int) -> str:
    for name in ID_FIELDS:
        value = record.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) != "":
            return str(value)
    return f"{path.stem}-{number}"


def _report(path: Path, bad: list[str], problems: list[Problem]) -> None:
    for message in bad[:_MAX_PROBLEMS]:
        where, reason = message.split(": ", 1)
        problems.append(Problem(f"{path}: {where}", reason))
    if len(bad) > _MAX_PROBLEMS:
        problems.append(Problem(str(path), f"{len(bad) - _MAX_PROBLEMS} more problem(s) of this kind"))


def read_collections(path: Path, problems: list[Problem]) -> list[Documents]:
    """Every collection at `path`: the file, or a folder's files by name (each its own collection)."""
    files = layout_files(path)
    stems = [f.stem for f in files]
    return [read_file(f, problems, f.stem if stems.count(f.stem) == 1 else f.name) for f in files]


def read_meng(path: Path) -> Dataset:
    """The layout as a Dataset: one unranked, per-document collection (movie) per file, no predictions yet."""
    from kweval.data.keyphrase import documents_dataset

    problems: list[Problem] = []
    collections = read_collections(path, problems)
    if not collections:
        problems.append(Problem(str(path), "no .json or .jsonl file"))
    return documents_dataset(collections, [], problems, str(path))
