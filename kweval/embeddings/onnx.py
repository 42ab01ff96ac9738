"""The ONNX Runtime embedder: the bundled sentence-transformers model exported once, then run without torch.

The export (``torch.onnx.export`` of the transformer; the int8 variant by
``onnxruntime.quantization.quantize_dynamic``) is written once beside the
embedding stores (``cache_dir()/onnx/<model>/``), offline.  Encoding then
needs only onnxruntime and the model's ``tokenizer.json`` (the `tokenizers`
package): tokens → transformer → mean pooling over real tokens → L2 norm, the
pooling of all-MiniLM-L6-v2's sentence-transformers modules.

sentence-transformers' own ``backend="onnx"`` needs optimum-onnx, whose
releases pin transformers < 4.58 (this project runs transformers 5), hence
this small exporter.  Threads follow the cores this process may use
(``os.sched_getaffinity``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import warnings
from pathlib import Path

import numpy as np

__all__ = ["available_cores", "onnx_file", "OnnxEncoder"]

OPSET = 17


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), not the machine's count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _export_dir(model_path: str, folder: Path) -> Path:
    digest = hashlib.sha256(str(Path(model_path).resolve()).encode()).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model_path).name)[-40:] or "model"
    return folder / "onnx" / f"{safe}-{digest}"


def onnx_file(model_path: str, folder: Path, quantized: bool) -> Path:
    """The exported model of `model_path` (fp32, or int8 when `quantized`), exporting it on first use."""
    out = _export_dir(model_path, folder)
    fp32 = out / "model.onnx"
    if not fp32.is_file():
        _export(model_path, fp32)
    if not quantized:
        return fp32
    int8 = out / "model_int8.onnx"
    if not int8.is_file():
        from kweval.extras import require

        quantization = require("onnxruntime.quantization", "semantic", "the onnx-int8 embedding backend")
        QuantType, quantize_dynamic = quantization.QuantType, quantization.quantize_dynamic

        tmp = int8.with_suffix(f".tmp{os.getpid()}.onnx")
        logging.getLogger().disabled, was = True, logging.getLogger().disabled  # its pre-processing advice
        try:
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
        finally:
            logging.getLogger().disabled = was
        os.replace(tmp, int8)
    return int8


def _export(model_path: str, target: Path) -> None:
    """Export the transformer (input_ids, attention_mask, token_type_ids → token embeddings); atomic."""
    import torch
    from transformers import AutoModel

    target.parent.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(model_path).eval()
    dummy = {name: torch.ones((2, 8), dtype=torch.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
    axes = {name: {0: "batch", 1: "tokens"} for name in [*dummy, "token_embeddings"]}
    tmp = target.with_suffix(f".tmp{os.getpid()}.onnx")

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
            str(tmp),
            input_names=list(dummy),
            output_names=["token_embeddings"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    os.replace(tmp, target)


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
