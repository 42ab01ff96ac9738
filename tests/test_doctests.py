"""The runnable examples in kweval.metrics' docstrings run, and every public metric function has one.

The metric families document their edge cases with numpydoc Examples
sections; running them here keeps the documentation true.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import kweval.metrics

MODULES = sorted(
    name for _, name, _ in pkgutil.iter_modules(kweval.metrics.__path__, "kweval.metrics.") if not name.endswith("_")
)


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_in_the_docstrings_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest example(s) of {name} failed"


FAMILIES = ["set_based", "weighted", "ranked", "keyphrase", "present_absent"]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_a_private_kernel_and_a_checked_public_function_with_examples(family):
    module = importlib.import_module(f"kweval.metrics.{family}")
    functions = dict(inspect.getmembers(module, inspect.isfunction))
    kernels = [n for n, f in functions.items() if n.startswith("_") and f.__module__ == module.__name__]
    public = [
        f
        for n, f in functions.items()
        if not n.startswith("_") and f.__module__ == module.__name__ and n.endswith("_scores")
    ]
    assert kernels and public, family
    for function in public:
        doc = inspect.getdoc(function) or ""
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{function.__name__}: no {section} section"
        assert ">>> " in doc
