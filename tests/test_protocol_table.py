"""docs/protocols.md's SemEval2017 table is what the CLI prints (one definition; scripts/protocol_table.py makes it)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.helpers import REPO, SEMEVAL


def _script():
    spec = importlib.util.spec_from_file_location("protocol_table", REPO / "scripts" / "protocol_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented(extractor: str) -> list[str]:
    text = (REPO / "docs" / "protocols.md").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("| ") and f"| {extractor} |" in line]


@pytest.mark.keyphrase
@pytest.mark.parametrize("extractor", ["firstphrases", pytest.param("yake", marks=pytest.mark.slow)])
def test_protocol_table_rows_are_the_cli_numbers(semeval_extracted, capsys, extractor: str):
    predictions = semeval_extracted(extractor)  # `kweval extract`'s output
    rows = _script().table_rows(str(SEMEVAL), [(extractor, str(predictions))])
    capsys.readouterr()
    assert len(rows) == 6 and rows == _documented(extractor)
