"""torch autograd reference for the card-cosine classifier over fine-tunable BERT layers
(tests/python/test_bert_top_gradients.py): reads a JSON case, writes every tensor's gradient as JSON.

    python bert_layer_gradients_reference.py CASE.json OUT.json

The case holds the layers' tensors in Hugging Face's layout (torch.nn.Linear weights as (out, in)), the token
states entering the layers, the sentences' offsets, the (first, second, label) pairs, scale and bias. Each layer is
BertLayer's computation written with torch.nn.functional; the head is mean pooling, L2 normalization and the mean
binary cross-entropy of sigmoid(scale cos + bias). Runs in float64.
"""
import json
import sys

import torch
import torch.nn.functional as F


def bert_layer(x, t, heads, eps, offsets):
    width = x.shape[1]
    head_width = width // heads
    q = F.linear(x, t["attention.self.query.weight"], t["attention.self.query.bias"])
    k = F.linear(x, t["attention.self.key.weight"], t["attention.self.key.bias"])
    v = F.linear(x, t["attention.self.value.weight"], t["attention.self.value.bias"])
    contexts = []
    for begin, end in zip(offsets[:-1], offsets[1:]):
        if end == begin:
            continue
        split = [m[begin:end].reshape(end - begin, heads, head_width).transpose(0, 1) for m in (q, k, v)]
        weights = torch.softmax(split[0] @ split[1].transpose(1, 2) / head_width ** 0.5, dim=-1)
        contexts.append((weights @ split[2]).transpose(0, 1).reshape(end - begin, width))
    context = torch.cat(contexts)
    attended = F.layer_norm(F.linear(context, t["attention.output.dense.weight"], t["attention.output.dense.bias"])
                            + x, (width,), t["attention.output.LayerNorm.weight"],
                            t["attention.output.LayerNorm.bias"], eps)
    intermediate = F.gelu(F.linear(attended, t["intermediate.dense.weight"], t["intermediate.dense.bias"]))
    return F.layer_norm(F.linear(intermediate, t["output.dense.weight"], t["output.dense.bias"]) + attended,
                        (width,), t["output.LayerNorm.weight"], t["output.LayerNorm.bias"], eps)


def main():
    case = json.loads(open(sys.argv[1]).read())
    offsets = case["offsets"]
    layers = [{name: torch.tensor(value, dtype=torch.float64, requires_grad=True) for name, value in layer.items()}
              for layer in case["layers"]]
    scale = torch.tensor(case["scale"], dtype=torch.float64, requires_grad=True)
    bias = torch.tensor(case["bias"], dtype=torch.float64, requires_grad=True)
    x = torch.tensor(case["tokens"], dtype=torch.float64)
    for layer in layers:
        x = bert_layer(x, layer, case["heads"], case["norm_epsilon"], offsets)
    pooled = torch.stack([x[b:e].mean(dim=0) for b, e in zip(offsets[:-1], offsets[1:])])
    vectors = F.normalize(pooled, dim=1, eps=1e-12)
    first = torch.tensor([p[0] for p in case["pairs"]])
    second = torch.tensor([p[1] for p in case["pairs"]])
    labels = torch.tensor([p[2] for p in case["pairs"]], dtype=torch.float64)
    logits = scale * (vectors[first] * vectors[second]).sum(dim=1) + bias
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    loss.backward()
    out = {"loss": loss.item(), "scale": scale.grad.item(), "bias": bias.grad.item(),
           "layers": [{name: tensor.grad.tolist() for name, tensor in layer.items()} for layer in layers]}
    open(sys.argv[2], "w").write(json.dumps(out))


if __name__ == "__main__":
    main()
