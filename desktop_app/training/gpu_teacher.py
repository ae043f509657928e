"""The teacher on a GPU: the original all-MiniLM-L6-v2 weights (the model the bundled int8 ONNX was quantized
from), half precision, through torch and transformers (present on the training machine, never in the app).

On a 2-core laptop the int8 ONNX teacher embeds about 40 texts a second; a GPU does tens of thousands, so a
whole corpus is featurised inside one short run. `halve` writes the fp16 copy that travels to that machine
(45 MB where the fp32 file is 91 MB); the safetensors layout is read and written by hand (an 8-byte header
length, a JSON header of dtype/shape/offsets, then the raw tensors) so this needs only numpy here.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .batches import epoch_batches, padded_batches


def halve(source: Path, target: Path) -> None:
    """Copy a float32 safetensors file as float16."""
    raw = source.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    body = raw[8 + length :]
    out_header: dict = {}
    chunks, offset = [], 0
    for name, entry in sorted((k, v) for k, v in header.items() if k != "__metadata__"):
        start, end = entry["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=np.float32 if entry["dtype"] == "F32" else np.int64)
        data = (array.astype(np.float16) if entry["dtype"] == "F32" else array).tobytes()
        dtype = "F16" if entry["dtype"] == "F32" else entry["dtype"]
        out_header[name] = {"dtype": dtype, "shape": entry["shape"], "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(out_header).encode()
    encoded += b" " * (-len(encoded) % 8)
    target.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))


class GpuTeacher:
    """Mean-pooled, L2-normalised embeddings of the original model, as sentence-transformers computes them."""

    def __init__(self, folder: Path, tokenizer_path: Path, max_tokens: int) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel

        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = BertModel(BertConfig.from_json_file(str(folder / "config.json")), add_pooling_layer=False)
        state = {
            k.removeprefix("bert."): v.float() for k, v in load_file(str(folder / "model.fp16.safetensors")).items()
        }
        self.model.load_state_dict(state, strict=False)
        dtype = torch.float16 if self.device == "cuda" else torch.float32
        self.model = self.model.to(self.device, dtype).eval()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)

    def embed(self, texts: list[str], batch_tokens: int = 1 << 18) -> np.ndarray:
        return self.embed_ids([e.ids for e in self.tokenizer.encode_batch(texts)], batch_tokens)

    def embed_tokens(self) -> np.ndarray:
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        assert cls is not None and sep is not None
        return self.embed_ids([[cls, i, sep] for i in range(self.tokenizer.get_vocab_size())])

    def embed_ids(self, sequences: list[list[int]], batch_tokens: int = 1 << 18) -> np.ndarray:
        torch = self.torch
        result = np.zeros((len(sequences), 384), dtype=np.float32)
        with torch.inference_mode():
            for rows, ids, mask_array in padded_batches(sequences, batch_tokens):
                mask = torch.from_numpy(mask_array).to(self.device)
                hidden = self.model(input_ids=torch.from_numpy(ids).to(self.device), attention_mask=mask)[0].float()
                pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
                result[rows] = torch.nn.functional.normalize(pooled, dim=1).cpu().numpy()
        return result


def train_table_on_gpu(
    table: np.ndarray, ids: list[np.ndarray], targets: np.ndarray, epochs: int, learning_rate: float, batch: int = 1024
) -> np.ndarray:
    """static_train.train_table on the GPU: the same loss, batches and lazy Adam (torch's SparseAdam updates
    only the rows a batch touches, as the numpy version does). numpy took minutes per pass over 200,000 texts
    on a laptop's cores; this takes seconds."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(table.copy()), freeze=False, mode="mean", sparse=True)
    bag = bag.to(device)
    optimiser = torch.optim.SparseAdam(list(bag.parameters()), lr=learning_rate)
    goal = torch.nn.functional.normalize(torch.from_numpy(targets.astype(np.float32)), dim=1).to(device)
    for rows in epoch_batches(ids, epochs, batch):
        flat = torch.from_numpy(np.concatenate([ids[r] for r in rows])).to(device)
        offsets = torch.from_numpy(np.cumsum([0] + [len(ids[r]) for r in rows[:-1]])).to(device)
        predicted = torch.nn.functional.normalize(bag(flat, offsets), dim=1)
        loss = (1 - (predicted * goal[torch.from_numpy(rows).to(device)]).sum(dim=1)).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return bag.weight.detach().cpu().numpy().astype(np.float32)
