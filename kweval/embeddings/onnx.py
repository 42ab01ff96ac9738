"""The ONNX Runtime embedder: the bundled sentence-transformers model exported once, then run without torch.

The export (``torch.onnx.export`` of the transformer; the int8 variant by
``onnxruntime.quantization.quantize_dynamic``) is written once beside the
embedding stores (``cache_dir()/onnx/<model>/``), offline, with a SHA-256
manifest each (`kweval.embeddings.exports`); a damaged export is moved aside
and rebuilt once (`load_exported`), else ExportError (the embedder then runs
on torch).  Encoding then
needs only onnxruntime and the model's ``tokenizer.json`` (the `tokenizers`
package): tokens → transformer → mean pooling over real tokens → L2 norm, the
pooling of all-MiniLM-L6-v2's sentence-transformers modules.

sentence-transformers' own ``backend="onnx"`` needs optimum-onnx, whose
releases pin transformers < 4.58 (this project runs transformers 5), hence
this small exporter.  Threads follow the cores this process may use
(``os.sched_getaffinity``), at most ``OMP_NUM_THREADS`` (`available_cores`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kweval.embeddings import exports

__all__ = ["available_cores", "onnx_file", "load_exported", "ExportError", "OnnxEncoder"]

OPSET = 17


def available_cores() -> int:
    """The threads torch and onnxruntime run: the cores this process may run on (its CPU affinity, not the machine's
    count), at most ``OMP_NUM_THREADS`` when that is a positive integer.  That variable is how a scheduler, Dask's
    workers (distributed's nanny sets it to 1 in each worker) or a user running several jobs at once says how many
    threads a process should use; one thread per core in each of several processes sharing the cores only makes
    their threads wait on each other."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        cores = max(1, os.cpu_count() or 1)
    cap = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(cores, int(cap)) if cap.isdigit() and int(cap) > 0 else cores


def _export_dir(model_path: str, folder: Path) -> Path:
    digest = hashlib.sha256(str(Path(model_path).resolve()).encode()).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model_path).name)[-40:] or "model"
    return folder / exports.EXPORTS_DIR / f"{safe}-{digest}"


class ExportError(Exception):
    """The export cannot be used: it cannot be built here (`storage`: writing it failed, e.g. a full disk), or it
    was damaged again after one rebuild."""

    def __init__(self, message: str, storage: bool = False):
        super().__init__(message)
        self.storage = storage


class _Damaged(Exception):
    def __init__(self, path: Path, reason: str):
        super().__init__(reason)
        self.path = path


def onnx_file(model_path: str, folder: Path, quantized: bool) -> Path:
    """The exported model of `model_path` (fp32, or int8 when `quantized`), built on first use, its manifest checked.

    `_Damaged` when a file does not match its manifest; ExportError when one cannot be built.
    """
    out = _export_dir(model_path, folder)
    fp32, int8 = out / "model.onnx", out / "model_int8.onnx"
    for path in (fp32, int8) if quantized else (fp32,):
        reason = exports.not_a_file(path)  # a folder or link in the export's place is never built over
        if reason is not None:
            raise _Damaged(path, reason)
    if quantized and int8.is_file():
        _checked(int8)
        return int8
    if not fp32.is_file():
        _build(fp32, lambda tmp: _export(model_path, tmp))
    _checked(fp32)
    if not quantized:
        return fp32
    _build(int8, lambda tmp: _quantize(fp32, tmp))
    return int8


def _checked(path: Path) -> None:
    try:
        reason = exports.check(path)
    except OSError as exc:  # unreadable: as good as damaged
        reason = f"cannot be read ({exc.strerror or exc})"
    if reason is not None:
        raise _Damaged(path, reason)


def _build(target: Path, write) -> None:
    """`write(tmp)` then rename to `target` and record its manifest; any failure is an ExportError (tmp removed)."""
    tmp = target.with_name(f"{target.stem}.tmp{os.getpid()}.onnx")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, target)
    except ImportError:
        raise
    except Exception as exc:  # torch's exporter, the quantizer and the disk raise many kinds
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise ExportError(f"cannot be built ({type(exc).__name__}: {exc})", storage=isinstance(exc, OSError)) from exc
    exports.write_manifest(target)


def _quantize(fp32: Path, tmp: Path) -> None:
    from kweval.extras import require

    quantization = require("onnxruntime.quantization", "semantic", "the onnx-int8 embedding backend")
    logging.getLogger().disabled, was = True, logging.getLogger().disabled  # its pre-processing advice
    try:
        quantization.quantize_dynamic(str(fp32), str(tmp), weight_type=quantization.QuantType.QInt8)
    finally:
        logging.getLogger().disabled = was


def load_exported(
    model_path: str, folder: Path, quantized: bool, on_note: Callable[[str], None] | None = None
) -> OnnxEncoder:
    """The encoder of `model_path`'s export under `folder`, built on first use.

    A damaged export (its manifest does not match, or onnxruntime cannot load
    it) is moved aside (`exports.move_aside`), said through `on_note`, and
    rebuilt once; ExportError when it cannot be built or is damaged again.
    """
    for attempt in range(2):
        try:
            path = onnx_file(model_path, folder, quantized)
        except _Damaged as damaged:
            bad, reason = damaged.path, str(damaged)
        else:
            try:
                encoder = OnnxEncoder(model_path, path)
            except ImportError:
                raise
            except Exception as exc:  # onnxruntime's InvalidProtobuf, Fail, ...: the file is no usable model
                bad, reason = path, f"onnxruntime cannot load it ({type(exc).__name__}: {_first_line(exc)})"
            else:
                if not exports.has_manifest(path):
                    exports.write_manifest(path)  # an export of an older build: it loads, so record it
                return encoder
        if attempt:
            raise ExportError(f"{bad} is damaged again after a rebuild: {reason}")
        try:
            target = exports.move_aside(bad)
        except OSError as exc:
            raise ExportError(f"{bad} is damaged ({reason}) and cannot be moved aside ({exc})", storage=True) from exc
        if on_note is not None:
            on_note(f"ONNX export {bad}: damaged ({reason}); moved aside to {target.name} and rebuilt")
    raise AssertionError("unreachable")  # pragma: no cover


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else ""


def _export(model_path: str, target: Path) -> None:
    """Export the transformer (input_ids, attention_mask, token_type_ids → token embeddings) to `target`."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_path).eval()
    dummy = {name: torch.ones((2, 8), dtype=torch.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
    axes = {name: {0: "batch", 1: "tokens"} for name in [*dummy, "token_embeddings"]}

    class Tokens(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about constants that are constant for this model
        torch.onnx.export(
            Tokens(model),
            tuple(dummy.values()),
            str(target),
            input_names=list(dummy),
            output_names=["token_embeddings"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


class OnnxEncoder:
    """``encode(texts) -> float32 [n, d]`` unit rows, as sentence-transformers' mean-pooling model gives them."""

    def __init__(self, model_path: str, onnx_path: Path, threads: int | None = None):
        from kweval.extras import require

        ort = require("onnxruntime", "semantic", "the ONNX embedding backend")
        Tokenizer = require("tokenizers", "semantic", "the ONNX embedding backend").Tokenizer

        config = json.loads((Path(model_path) / "sentence_bert_config.json").read_text())
        self.tokenizer = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        self.tokenizer.enable_truncation(int(config.get("max_seq_length", 256)))
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of each batch
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or available_cores()
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)

    def token_counts(self, texts: list[str]) -> np.ndarray:
        """Real tokens of each text (special tokens included, truncated as in `encode`)."""
        return np.fromiter(
            (sum(e.attention_mask) for e in self.tokenizer.encode_batch(texts)), dtype=np.int64, count=len(texts)
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        batch = self.tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64),
        }
        tokens = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        mask = feed["attention_mask"][:, :, None].astype(np.float32)
        pooled = (tokens * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
