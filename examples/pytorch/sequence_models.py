"""Sequence models with several inputs and outputs, for export.py --sequence:
a BERT-style encoder with an attention-mask input, a GPT-2-style decoding
step with its key/value cache as inputs and outputs, a ViT, and an LSTM
language model. Small widths, random weights.

fuelc plans static shapes with symbolic dims that are products of symbols,
so each model keeps its sequence extents static and its batch symbolic:
- the encoder takes sequences padded to a fixed length, the mask marking
  the real tokens (what AOT deployments do);
- the decoder's cache is a fixed-capacity buffer [layers, B, heads,
  capacity, head_dim] that each step writes at the token's position and
  attends up to it (the static-cache layout of TensorRT-LLM and Hugging
  Face's StaticCache); a cache that grows by concatenation has extent
  `past + 1`, a sum of symbols, which fuelc refuses.
"""
import torch


class Attention(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)

    def split(self, y):
        b, t, c = y.shape
        return y.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, x, bias, cache=None):
        """x [B, T, C]; bias added to the scores; cache (keys, values,
        one-hot position [B, 1, capacity, 1]) to write this step's key and
        value into and attend over."""
        b, t, c = x.shape
        q, k, v = (self.split(y) for y in self.qkv(x).split(c, dim=-1))
        if cache is not None:
            keys, values, at = cache
            k = keys * (1 - at) + k * at
            v = values * (1 - at) + v * at
        scores = q @ k.transpose(-2, -1) / (c // self.heads) ** 0.5 + bias
        out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(out), k, v


def mlp(width):
    return torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                               torch.nn.Linear(4 * width, width))


class BertEncoder(torch.nn.Module):
    """Token and position embeddings, post-LayerNorm encoder layers; the
    mask (1: token, 0: padding) becomes an additive -10000 on padded keys."""
    inputs, outputs = ("ids", "mask"), ("y",)

    def __init__(self, vocab, width, heads, layers, length):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Parameter(torch.randn(length, width) * 0.02)
        self.ln = torch.nn.LayerNorm(width)
        self.attn = torch.nn.ModuleList(Attention(width, heads) for _ in range(layers))
        self.ffn = torch.nn.ModuleList(mlp(width) for _ in range(layers))
        self.ln1 = torch.nn.ModuleList(torch.nn.LayerNorm(width) for _ in range(layers))
        self.ln2 = torch.nn.ModuleList(torch.nn.LayerNorm(width) for _ in range(layers))
        self.vocab, self.length = vocab, length

    def forward(self, ids, mask):
        x = self.ln(self.tokens(ids) + self.positions)
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        for attn, ffn, ln1, ln2 in zip(self.attn, self.ffn, self.ln1, self.ln2):
            x = ln1(x + attn(x, bias)[0])
            x = ln2(x + ffn(x))
        return x

    def example(self, batch):
        ids = torch.randint(0, self.vocab, (batch, self.length))
        lengths = torch.randint(1, self.length + 1, (batch,))
        mask = (torch.arange(self.length)[None, :] < lengths[:, None]).to(torch.int64)
        return ids, mask


class Gpt2Step(torch.nn.Module):
    """One decoding step of a GPT-2-style model (pre-LayerNorm blocks, tied
    head): the new token `ids` [B, 1] at position `pos` [B], the caches
    [layers, B, heads, capacity, head_dim] in; logits and the caches with
    this step written out."""
    inputs, outputs = ("ids", "pos", "keys", "values"), ("logits", "new_keys", "new_values")
    batch_axes = {"keys": 1, "values": 1, "new_keys": 1, "new_values": 1}

    def __init__(self, vocab, width, heads, layers, capacity):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(capacity, width)
        self.attn = torch.nn.ModuleList(Attention(width, heads) for _ in range(layers))
        self.mlp = torch.nn.ModuleList(mlp(width) for _ in range(layers))
        self.ln1 = torch.nn.ModuleList(torch.nn.LayerNorm(width) for _ in range(layers))
        self.ln2 = torch.nn.ModuleList(torch.nn.LayerNorm(width) for _ in range(layers))
        self.lnf = torch.nn.LayerNorm(width)
        self.vocab, self.capacity, self.shape = vocab, capacity, (layers, heads, width // heads)

    def forward(self, ids, pos, keys, values):
        x = self.tokens(ids) + self.positions(pos)[:, None, :]
        slots = torch.arange(self.capacity)[None, :]
        at = (slots == pos[:, None]).to(x.dtype)[:, None, :, None]
        bias = (slots > pos[:, None]).to(x.dtype)[:, None, None, :] * -10000.0
        new_keys, new_values = [], []
        for i, (attn, ffn, ln1, ln2) in enumerate(zip(self.attn, self.mlp, self.ln1, self.ln2)):
            a, k, v = attn(ln1(x), bias, (keys[i], values[i], at))
            x = x + a
            x = x + ffn(ln2(x))
            new_keys.append(k)
            new_values.append(v)
        logits = self.lnf(x) @ self.tokens.weight.t()
        return logits, torch.stack(new_keys), torch.stack(new_values)

    def example(self, batch):
        layers, heads, dim = self.shape
        cache = (layers, batch, heads, self.capacity, dim)
        return (torch.randint(0, self.vocab, (batch, 1)),
                torch.randint(0, self.capacity, (batch,)), torch.randn(cache), torch.randn(cache))


class Vit(torch.nn.Module):
    """A ViT: patches embedded by a strided convolution, a class token,
    position embeddings, torch's encoder layers (pre-norm), a linear head
    on the class token."""
    inputs, outputs = ("x",), ("y",)

    def __init__(self, image, patch, width, heads, layers, classes):
        super().__init__()
        self.embed = torch.nn.Conv2d(3, width, patch, patch)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.positions = torch.nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, width) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm, self.head = torch.nn.LayerNorm(width), torch.nn.Linear(width, classes)
        self.image = image

    def forward(self, x):
        patches = self.embed(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), patches], dim=1)
        return self.head(self.norm(self.encoder(tokens + self.positions))[:, 0])

    def example(self, batch):
        return (torch.randn(batch, 3, self.image, self.image),)


class LstmLanguageModel(torch.nn.Module):
    """Token embeddings, a two-layer LSTM, logits over the vocabulary at
    every step."""
    inputs, outputs = ("ids",), ("logits",)

    def __init__(self, vocab, width, hidden, length):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.lstm = torch.nn.LSTM(width, hidden, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)
        self.vocab, self.length = vocab, length

    def forward(self, ids):
        return self.head(self.lstm(self.tokens(ids))[0])

    def example(self, batch):
        return (torch.randint(0, self.vocab, (batch, self.length)),)


def sequence_models():
    """(name, module) in a fixed order and seed; module.example(batch) gives
    inputs."""
    torch.manual_seed(0)
    yield "bert", BertEncoder(vocab=100, width=64, heads=4, layers=2, length=16)
    yield "gpt2_step", Gpt2Step(vocab=100, width=64, heads=4, layers=2, capacity=16)
    yield "vit", Vit(image=32, patch=8, width=64, heads=4, layers=2, classes=10)
    yield "lstm_lm", LstmLanguageModel(vocab=100, width=32, hidden=64, length=12)
