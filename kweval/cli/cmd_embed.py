"""`kweval embed` (fill the embedding cache for a dataset) and `kweval cache` (inspect or clear it)."""

from __future__ import annotations

import argparse
import sys

from kweval.cli.common import add_embedding_options, positive_int, problem_lines
from kweval.messages import say


def add_parsers(sub) -> None:
    """Register `embed` and `cache` on the CLI's subparsers."""
    em = sub.add_parser(
        "embed", help="precompute the embedding cache for a dataset (makes --semantic and the dashboard instant)"
    )
    em.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    add_embedding_options(em)
    em.add_argument("--batch-size", type=positive_int, default=256)

    ca = sub.add_parser(
        "cache", help="inspect or clear the caches: embedding stores, ONNX exports, stems (KWEVAL_CACHE_DIR)"
    )
    ca.add_argument("action", choices=["info", "clear"])
    ca.add_argument("--embedding-model", help="with clear: only this model's store")


def cmd_embed(args: argparse.Namespace) -> int:
    """Embed every distinct normalised keyword and GT keyword of a dataset into the cache."""
    from kweval.data import load_dataset
    from kweval.embeddings import semantic
    from kweval.embeddings.store import EmbeddingStore
    from kweval.evaluation.pipeline import clean_ground_truth
    from kweval.text.normalize import normalize

    dataset = load_dataset(args.data)
    for line in problem_lines(dataset.problems):
        print(line, file=sys.stderr)
    keywords = dataset.predictions["keyword"].dropna().unique().tolist()
    texts = [normalize(k) for k in keywords if isinstance(k, str)]
    texts += clean_ground_truth(dataset.ground_truth)["norm"].tolist()
    texts = [t for t in dict.fromkeys(texts) if t]
    backend, precision = semantic.variant(args.embedding_backend)
    store = EmbeddingStore(
        args.embedding_model,
        backend=backend,
        precision=precision,
        on_note=lambda note: say("embedding cache", note),
    )
    progress = _tqdm_counter(len(texts)) if sys.stderr.isatty() else None
    semantic.embed_texts(
        texts,
        model_id=args.embedding_model,
        store=store,
        batch_size=args.batch_size,
        progress=progress,
        backend=args.embedding_backend,
    )
    print(f"{len(texts)} keyword(s): {store.hits} already cached, {store.misses} embedded; store {store.path}")
    return 0


def _tqdm_counter(total: int):
    """A progress bar on stderr counting embedded keywords."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc="embedding", unit="kw", file=sys.stderr)

    def update(done: int, _total: int) -> None:
        bar.n = done
        bar.refresh()
        if done >= _total:
            bar.close()

    return update


def cmd_cache(args: argparse.Namespace) -> int:
    """`cache info` lists the stores, the ONNX exports and the stem cache; `cache clear` removes them (or, with
    --embedding-model, that model's stores only)."""
    from kweval.embeddings.exports import clear_exports, export_info
    from kweval.embeddings.store import cache_clear, cache_dir, cache_info, describe
    from kweval.text.stemming import stem_cache_clear, stem_cache_info

    folder = cache_dir()
    if args.action == "clear":
        try:
            removed = cache_clear(model_id=args.embedding_model)
            if args.embedding_model is not None:
                print(f"removed {removed} store(s) from {folder}")
                return 0
            files, stems = clear_exports(folder), stem_cache_clear()
        except OSError as exc:  # a file the user may not remove: say which, no traceback
            say("cache clear", exc)
            return 1
        print(f"removed {removed} store(s), {files} ONNX export file(s) and {stems} stem cache file(s) from {folder}")
        return 0
    stores = cache_info()
    print(f"cache directory: {folder}")
    if not stores:
        print("no embedding store yet (run `kweval embed DATA`)")
    for info in stores:
        print(describe(info))
    exported = export_info(folder)
    if not exported:
        print("no ONNX export yet (made by the first run of the onnx backends)")
    for info in exported:
        state = f"DAMAGED ({info['damage']}; moved aside and rebuilt on its next use)" if info["damage"] else "sound"
        checked = "" if info["manifest"] or info["damage"] else " (no manifest: checked when loaded)"
        print(f"ONNX export {info['path']}: {info['bytes'] / 1e6:.1f} MB, {state}{checked}")
    for info in stem_cache_info():
        state = f"DAMAGED ({info['damage']})" if info["damage"] else f"{info['entries']:,} stem(s)"
        print(f"stem cache {info['path']}: {state}, {info['bytes'] / 1e6:.1f} MB")
    return 0
