"""Measured API coverage: our public names against PyTorch's, per namespace, with keyword
names per function.

Run in the parity environment (torch importable)::

    .venv-parity/bin/python tools/api_coverage.py                       # print the figures
    .venv-parity/bin/python tools/api_coverage.py --before /tmp/before22 \\
        --out docs/api-coverage.md                                      # the committed report

``--before DIR`` measures a second checkout (``git worktree add DIR <commit>``) in a
subprocess with ``PYTHONPATH=DIR`` and puts its figures beside these.

Namespaces: ``torch.__all__`` (against ``eager``), ``torch.nn``, ``torch.nn.functional``,
``torch.optim``, ``torch.Tensor`` methods and properties, ``torch.distributions`` and
``torch.utils.data``. A torch name is *covered* when the matching eager namespace has an
attribute of that name. Keywords: for every covered name whose torch object has an
``inspect.signature`` (many of torch's C functions have none and are left out), the
parameter names other than ``self``/``*args``/``**kwargs`` are compared with ours; a
keyword is covered when our signature has it by name, or takes ``**kwargs`` (counted
apart, as "via **kwargs").

Uncovered names are ranked by how often public training code uses them. That ranking is a
fixed list judged by hand (``USAGE`` below: 3 = in most training scripts, 2 = common, 1 =
seen in a fair share of repositories, 0 = not in the list), not a measurement of a corpus.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import types

# name (as "namespace:name") -> how often public training code uses it (judged, see above)
USAGE = {}
for _score, _names in {
    3: ["torch:no_grad", "torch:tensor", "torch:zeros", "torch:ones", "torch:randn",
        "torch:cat", "torch:stack", "torch:manual_seed", "torch:save", "torch:load",
        "torch:device", "torch:arange", "torch:float32", "torch:long",
        "torch:cuda", "torch:from_numpy", "torch:argmax", "torch:sum", "torch:mean",
        "torch:exp", "torch:log", "torch:sqrt", "torch:matmul", "torch:where",
        "torch:clamp", "torch:randint", "torch:rand", "torch:zeros_like",
        "torch:ones_like", "torch:randperm", "torch:max", "torch:min", "torch:softmax",
        "torch:sigmoid", "torch:tanh", "torch:inference_mode", "torch:compile",
        "torch:set_grad_enabled", "torch:empty", "torch:full", "torch:linspace",
        "torch:bmm", "torch:einsum", "torch:tril", "torch:multinomial", "torch:topk",
        "torch:sort", "torch:allclose", "torch:is_tensor", "torch:flatten",
        "nn:Module", "nn:Linear", "nn:Conv2d", "nn:ReLU", "nn:Sequential", "nn:Dropout",
        "nn:CrossEntropyLoss", "nn:MSELoss", "nn:BatchNorm2d", "nn:LayerNorm",
        "nn:Embedding", "nn:Parameter", "nn:ModuleList", "nn:MaxPool2d", "nn:GELU",
        "nn:LSTM", "nn:functional", "nn:init", "nn:utils", "nn:BCEWithLogitsLoss",
        "nn:Flatten", "nn:Identity", "nn:MultiheadAttention", "nn:AdaptiveAvgPool2d",
        "nn:Tanh", "nn:Sigmoid", "nn:ModuleDict", "nn:ConvTranspose2d", "nn:GRU",
        "nn:LeakyReLU", "nn:Softmax", "nn:BatchNorm1d", "nn:TransformerEncoderLayer",
        "nn:TransformerEncoder", "nn:NLLLoss", "nn:L1Loss", "nn:SiLU", "nn:GroupNorm",
        "nn:DataParallel", "nn:parallel",
        "nn.functional:relu", "nn.functional:cross_entropy", "nn.functional:softmax",
        "nn.functional:log_softmax", "nn.functional:mse_loss", "nn.functional:dropout",
        "nn.functional:gelu", "nn.functional:linear", "nn.functional:pad",
        "nn.functional:interpolate", "nn.functional:nll_loss", "nn.functional:one_hot",
        "nn.functional:binary_cross_entropy_with_logits", "nn.functional:normalize",
        "nn.functional:scaled_dot_product_attention", "nn.functional:layer_norm",
        "nn.functional:conv2d", "nn.functional:max_pool2d", "nn.functional:silu",
        "nn.functional:binary_cross_entropy", "nn.functional:leaky_relu",
        "nn.functional:embedding", "nn.functional:l1_loss", "nn.functional:softplus",
        "optim:Adam", "optim:SGD", "optim:AdamW", "optim:lr_scheduler", "optim:Optimizer",
        "Tensor:backward", "Tensor:item", "Tensor:to", "Tensor:view", "Tensor:size",
        "Tensor:shape", "Tensor:numpy", "Tensor:detach", "Tensor:cpu", "Tensor:cuda",
        "Tensor:float", "Tensor:long", "Tensor:sum", "Tensor:mean", "Tensor:argmax",
        "Tensor:reshape", "Tensor:permute", "Tensor:transpose", "Tensor:unsqueeze",
        "Tensor:squeeze", "Tensor:contiguous", "Tensor:grad", "Tensor:requires_grad",
        "Tensor:zero_", "Tensor:clone", "Tensor:eq", "Tensor:max", "Tensor:tolist",
        "Tensor:dim", "Tensor:device", "Tensor:dtype", "Tensor:masked_fill", "Tensor:data",
        "Tensor:expand", "Tensor:flatten", "Tensor:mul", "Tensor:add_", "Tensor:type",
        "Tensor:copy_", "Tensor:fill_", "Tensor:normal_", "Tensor:uniform_",
        "Tensor:numel", "Tensor:chunk", "Tensor:split", "Tensor:gather", "Tensor:index_select",
        "Tensor:T", "Tensor:pow", "Tensor:abs", "Tensor:exp", "Tensor:log",
        "distributions:Normal", "distributions:Categorical",
        "utils.data:DataLoader", "utils.data:Dataset", "utils.data:TensorDataset",
        "utils.data:random_split", "utils.data:Subset"],
    2: ["torch:bool", "torch:float16", "torch:bfloat16", "torch:int64", "torch:float64",
        "torch:autograd", "torch:backends", "torch:set_num_threads", "torch:chunk",
        "torch:split", "torch:gather", "torch:norm", "torch:abs", "torch:cumsum",
        "torch:mm", "torch:sin", "torch:cos", "torch:pow", "torch:eye", "torch:diag",
        "torch:meshgrid", "torch:nonzero", "torch:unique", "torch:squeeze",
        "torch:unsqueeze", "torch:logsumexp", "torch:full_like", "torch:randn_like",
        "torch:rand_like", "torch:empty_like", "torch:as_tensor", "torch:Generator",
        "torch:get_default_dtype", "torch:set_default_dtype", "torch:enable_grad",
        "torch:isnan", "torch:isinf", "torch:isfinite", "torch:nan_to_num", "torch:lerp",
        "torch:outer", "torch:cdist", "torch:var", "torch:std", "torch:prod",
        "torch:masked_fill", "torch:roll", "torch:flip", "torch:repeat_interleave",
        "torch:amp", "torch:autocast", "torch:distributed", "torch:jit", "torch:fft",
        "torch:linalg", "torch:special", "torch:Size", "torch:dtype", "torch:Tensor",
        "torch:index_select", "torch:scatter", "torch:erf", "torch:sign", "torch:floor",
        "torch:round", "torch:logical_and", "torch:logical_not", "torch:bernoulli",
        "torch:normal", "torch:triu", "torch:addmm", "torch:baddbmm", "torch:atan2",
        "torch:argsort", "torch:searchsorted", "torch:bincount", "torch:histc",
        "torch:tensordot", "torch:kron", "torch:cross", "torch:det", "torch:inverse",
        "torch:svd", "torch:quantile", "torch:median", "torch:mode", "torch:kthvalue",
        "torch:sparse_coo_tensor", "torch:spmm", "torch:get_rng_state", "torch:set_rng_state",
        "torch:use_deterministic_algorithms", "torch:set_float32_matmul_precision",
        "torch:channels_last", "torch:finfo", "torch:iinfo", "torch:hub", "torch:onnx",
        "torch:utils", "torch:nn", "torch:optim", "torch:distributions",
        "nn:Conv1d", "nn:Conv3d", "nn:BatchNorm3d", "nn:InstanceNorm2d", "nn:ELU",
        "nn:Softplus", "nn:Upsample", "nn:AvgPool2d", "nn:MaxPool1d", "nn:AdaptiveAvgPool1d",
        "nn:Dropout2d", "nn:PixelShuffle", "nn:TransformerDecoderLayer",
        "nn:TransformerDecoder", "nn:Transformer", "nn:BCELoss", "nn:SmoothL1Loss",
        "nn:KLDivLoss", "nn:HuberLoss", "nn:CosineSimilarity", "nn:PReLU", "nn:Mish",
        "nn:Hardswish", "nn:RNN", "nn:LSTMCell", "nn:GRUCell", "nn:Unflatten",
        "nn:ParameterList", "nn:ParameterDict", "nn:EmbeddingBag", "nn:ZeroPad2d",
        "nn:ReflectionPad2d", "nn:Softmax2d", "nn:LogSoftmax", "nn:Bilinear",
        "nn:SyncBatchNorm", "nn:ConvTranspose1d", "nn:Fold", "nn:Unfold",
        "nn:CosineEmbeddingLoss", "nn:TripletMarginLoss", "nn:MarginRankingLoss",
        "nn:PoissonNLLLoss", "nn:GaussianNLLLoss", "nn:CTCLoss", "nn:MultiLabelSoftMarginLoss",
        "nn.functional:sigmoid", "nn.functional:tanh", "nn.functional:elu",
        "nn.functional:avg_pool2d", "nn.functional:adaptive_avg_pool2d",
        "nn.functional:batch_norm", "nn.functional:cosine_similarity", "nn.functional:kl_div",
        "nn.functional:smooth_l1_loss", "nn.functional:conv1d", "nn.functional:unfold",
        "nn.functional:grid_sample", "nn.functional:affine_grid", "nn.functional:pixel_shuffle",
        "nn.functional:huber_loss", "nn.functional:group_norm", "nn.functional:mish",
        "nn.functional:hardtanh", "nn.functional:glu", "nn.functional:logsigmoid",
        "nn.functional:conv_transpose2d", "nn.functional:max_pool1d", "nn.functional:fold",
        "nn.functional:gumbel_softmax", "nn.functional:instance_norm",
        "nn.functional:triplet_margin_loss", "nn.functional:pairwise_distance",
        "nn.functional:multi_head_attention_forward", "nn.functional:relu6",
        "optim:RMSprop", "optim:Adagrad", "optim:LBFGS", "optim:Adadelta", "optim:Adamax",
        "optim:NAdam", "optim:RAdam", "optim:swa_utils", "optim:SparseAdam", "optim:ASGD",
        "optim:Rprop",
        "Tensor:min", "Tensor:std", "Tensor:var", "Tensor:norm", "Tensor:softmax",
        "Tensor:sqrt", "Tensor:clamp", "Tensor:repeat", "Tensor:new_zeros", "Tensor:new_ones",
        "Tensor:new_tensor", "Tensor:new_full", "Tensor:requires_grad_", "Tensor:is_cuda",
        "Tensor:scatter_", "Tensor:index_add_", "Tensor:masked_fill_", "Tensor:bool",
        "Tensor:int", "Tensor:half", "Tensor:double", "Tensor:all", "Tensor:any",
        "Tensor:sort", "Tensor:topk", "Tensor:cumsum", "Tensor:type_as", "Tensor:view_as",
        "Tensor:expand_as", "Tensor:nelement", "Tensor:element_size", "Tensor:unbind",
        "Tensor:register_hook", "Tensor:retain_grad", "Tensor:is_leaf", "Tensor:grad_fn",
        "Tensor:pin_memory", "Tensor:share_memory_", "Tensor:storage", "Tensor:stride",
        "Tensor:apply_", "Tensor:map_", "Tensor:bernoulli_", "Tensor:exponential_",
        "Tensor:random_", "Tensor:clamp_", "Tensor:sigmoid", "Tensor:tanh", "Tensor:relu",
        "Tensor:argsort", "Tensor:nonzero", "Tensor:unique", "Tensor:flip", "Tensor:roll",
        "Tensor:mT", "Tensor:H", "Tensor:mH", "Tensor:narrow", "Tensor:unfold",
        "Tensor:addmm", "Tensor:baddbmm", "Tensor:lerp_", "Tensor:mul_", "Tensor:div_",
        "distributions:Bernoulli", "distributions:MultivariateNormal",
        "distributions:Uniform", "distributions:kl_divergence", "distributions:Independent",
        "distributions:TransformedDistribution", "distributions:Beta",
        "distributions:Dirichlet", "distributions:Gamma", "distributions:LogNormal",
        "distributions:OneHotCategorical", "distributions:RelaxedOneHotCategorical",
        "distributions:transforms", "distributions:Laplace", "distributions:Poisson",
        "distributions:Exponential", "distributions:StudentT", "distributions:MixtureSameFamily",
        "distributions:Binomial", "distributions:Distribution", "distributions:constraints",
        "utils.data:Sampler", "utils.data:RandomSampler", "utils.data:SequentialSampler",
        "utils.data:BatchSampler", "utils.data:IterableDataset",
        "utils.data:WeightedRandomSampler", "utils.data:ConcatDataset",
        "utils.data:default_collate", "utils.data:get_worker_info",
        "utils.data:SubsetRandomSampler", "utils.data:DistributedSampler",
        "utils.data:ChainDataset", "utils.data:StackDataset"],
    1: ["torch:addcmul", "torch:addcdiv", "torch:cosine_similarity", "torch:logaddexp",
        "torch:asin", "torch:acos", "torch:arctan2", "torch:fmod", "torch:trapz",
        "torch:frac", "torch:heaviside", "torch:aminmax", "torch:diag_embed",
        "torch:block_diag", "torch:cartesian_prod", "torch:combinations", "torch:vander",
        "nn:LazyLinear", "nn:LocalResponseNorm", "nn:AdaptiveMaxPool3d",
        "nn:HingeEmbeddingLoss", "nn:ChannelShuffle", "nn:AdaptiveLogSoftmaxWithLoss",
        "nn:FractionalMaxPool2d", "nn:LPPool2d", "nn:Buffer",
        "nn.functional:embedding_bag", "nn.functional:ctc_loss",
        "nn.functional:gaussian_nll_loss", "nn.functional:cosine_embedding_loss",
        "nn.functional:channel_shuffle", "nn.functional:hinge_embedding_loss",
        "nn.functional:local_response_norm", "nn.functional:lp_pool2d",
        "optim:Adafactor", "optim:Muon",
        "Tensor:index_put_", "Tensor:scatter_add_", "Tensor:addcmul_", "Tensor:addcdiv_",
        "Tensor:logit", "Tensor:nan_to_num", "Tensor:put_", "Tensor:index_fill_",
        "distributions:Gumbel", "distributions:Cauchy", "distributions:HalfNormal",
        "distributions:Geometric", "distributions:NegativeBinomial",
        "distributions:Weibull", "distributions:Chi2", "distributions:VonMises",
        "distributions:LowRankMultivariateNormal", "distributions:biject_to",
        "distributions:transform_to", "distributions:ContinuousBernoulli",
        "utils.data:DataLoader2", "utils.data:functional_datapipe"],
}.items():
    for _n in _names:
        USAGE[_n] = _score

NAMESPACES = ["torch", "nn", "nn.functional", "optim", "Tensor", "distributions",
              "utils.data"]


def _public(names):
    return sorted({n for n in names if not n.startswith("_")})


def _torch_names(torch) -> dict:
    """namespace -> {name: torch object} (the names PyTorch makes public there)."""
    import torch.distributions as td
    import torch.nn.functional as tf
    import torch.utils.data as tud

    def module_names(mod, keep=None):
        names = getattr(mod, "__all__", None)
        if names is None:
            names = dir(mod)
        out = {}
        for n in _public(names):
            obj = getattr(mod, n, None)
            if obj is None:
                continue
            if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("torch"):
                continue   # typing, math, warnings ... imported by torch's module
            if keep is not None and not keep(obj):
                continue
            out[n] = obj
        return out

    def torch_defined(obj):
        mod = getattr(obj, "__module__", "") or ""
        return isinstance(obj, types.ModuleType) or mod.startswith("torch") or \
            not (inspect.isclass(obj) or callable(obj))

    tensor = {n: getattr(torch.Tensor, n) for n in _public(dir(torch.Tensor))}
    return {
        "torch": {n: getattr(torch, n) for n in _public(torch.__all__) if hasattr(torch, n)},
        "nn": module_names(torch.nn, torch_defined),
        "nn.functional": module_names(
            tf, lambda o: callable(o) and not inspect.isclass(o) and torch_defined(o)),
        "optim": module_names(torch.optim, torch_defined),
        "Tensor": tensor,
        "distributions": module_names(td, torch_defined),
        "utils.data": module_names(tud, torch_defined),
    }


def _ours(ns: str):
    import eager
    return {"torch": eager, "nn": eager.nn, "nn.functional": eager.nn.functional,
            "optim": eager.optim, "Tensor": eager.Tensor,
            "distributions": eager.distributions,
            "utils.data": __import__("eager.utils.data", fromlist=["x"])}[ns]


def _params(obj):
    """(keyword names, takes **kwargs) of a callable, or None without a signature."""
    target = obj
    if inspect.isclass(obj):
        target = obj.__init__
        if target is object.__init__:
            return None
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    names, var_kw = [], False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
        elif p.kind is not p.VAR_POSITIONAL and p.name not in ("self", "cls"):
            names.append(p.name)
    return names, var_kw


def measure() -> dict:
    """Figures for the ``eager`` importable now (names and keywords per namespace)."""
    import torch
    result = {}
    for ns, names in _torch_names(torch).items():
        ours = _ours(ns)
        covered, missing = [], []
        kw_total = kw_named = kw_var = kw_sigs = 0
        kw_missing = {}
        for n, tobj in names.items():
            try:
                mine = getattr(ours, n)
                has = True
            except Exception:   # noqa: BLE001 - a lazy attribute that raises is missing
                has = False
            (covered if has else missing).append(n)
            if not has or not callable(tobj):
                continue
            tp = _params(tobj)
            if tp is None or not tp[0]:
                continue
            kw_sigs += 1
            op = _params(mine) if callable(mine) else None
            ours_names, ours_var = op if op is not None else ([], True)
            for k in tp[0]:
                kw_total += 1
                if k in ours_names:
                    kw_named += 1
                elif ours_var:
                    kw_var += 1
                else:
                    kw_missing.setdefault(n, []).append(k)
        result[ns] = {"total": len(names), "covered": len(covered), "missing": missing,
                      "kw_signatures": kw_sigs, "kw_total": kw_total, "kw_named": kw_named,
                      "kw_var": kw_var, "kw_missing": kw_missing}
    return result


def _pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"


def _rank(ns, names):
    return sorted(names, key=lambda n: (-USAGE.get(f"{ns}:{n}", 0), n.lower()))


def report(after: dict, before: dict | None, before_label: str, versions: str) -> str:
    out = ["# API coverage against PyTorch", "",
           "Measured by `tools/api_coverage.py` in the parity environment "
           f"({versions}); regenerate with",
           "", "```bash",
           "git worktree add /tmp/before22 a007c3d",
           ".venv-parity/bin/python tools/api_coverage.py --before /tmp/before22 "
           "--out docs/api-coverage.md",
           "```", "",
           "A torch name is covered when the matching `eager` namespace has an attribute of "
           "that name (`torch.__all__` against `eager`, `torch.nn` against `eager.nn`, "
           "`torch.Tensor`'s public attributes against `eager.Tensor`, ...); submodules "
           "count as names. Keywords: for each covered name whose torch object has an "
           "`inspect.signature` (most of torch's C functions and Tensor methods have none "
           "and are not counted), its parameter names (not `self`, `*args`, `**kwargs`) "
           "are looked up in our signature; one our signature only takes through "
           "`**kwargs` is counted apart. Having a name is not having every behaviour: "
           "the parity tests (`pytest -m parity`) check numbers.", "",
           "## Names per namespace", ""]
    head = "| namespace | torch names | covered now | now |"
    rule = "| --- | --: | --: | --: |"
    if before is not None:
        head = f"| namespace | torch names | covered at {before_label} | then | covered now " \
               "| now |"
        rule = "| --- | --: | --: | --: | --: | --: |"
    out += [head, rule]
    tot = {"t": 0, "a": 0, "b": 0}
    for ns in NAMESPACES:
        a = after[ns]
        tot["t"] += a["total"]
        tot["a"] += a["covered"]
        label = "torch (`__all__`)" if ns == "torch" else f"torch.{ns}"
        if before is not None:
            b = before[ns]
            tot["b"] += b["covered"]
            out.append(f"| {label} | {a['total']} | {b['covered']} | "
                       f"{_pct(b['covered'], b['total'])} | {a['covered']} | "
                       f"{_pct(a['covered'], a['total'])} |")
        else:
            out.append(f"| {label} | {a['total']} | {a['covered']} | "
                       f"{_pct(a['covered'], a['total'])} |")
    if before is not None:
        out.append(f"| **all** | {tot['t']} | {tot['b']} | {_pct(tot['b'], tot['t'])} | "
                   f"{tot['a']} | {_pct(tot['a'], tot['t'])} |")
    else:
        out.append(f"| **all** | {tot['t']} | {tot['a']} | {_pct(tot['a'], tot['t'])} |")

    out += ["", "## Keywords of covered names", "",
            "| namespace | signatures compared | torch keywords | ours by name | via **kwargs "
            "| missing | by name" + (f" at {before_label}" if before else "") + " |",
            "| --- | --: | --: | --: | --: | --: | --: |"]
    for ns in NAMESPACES:
        a = after[ns]
        miss = a["kw_total"] - a["kw_named"] - a["kw_var"]
        then = ""
        if before is not None:
            b = before[ns]
            then = f"{b['kw_named']} of {b['kw_total']} ({_pct(b['kw_named'], b['kw_total'])})"
        else:
            then = "-"
        out.append(f"| {ns} | {a['kw_signatures']} | {a['kw_total']} | {a['kw_named']} "
                   f"({_pct(a['kw_named'], a['kw_total'])}) | {a['kw_var']} | {miss} | "
                   f"{then} |")

    out += ["", "## Uncovered names, most used first", "",
            "Ranked by a fixed list judged from typical public training scripts "
            "(pytorch/examples, tutorials, minGPT/nanoGPT-style models, VAEs, GANs, "
            "U-Nets, GNNs, RL and normalizing-flow code): **3** = in most training "
            "scripts, **2** = common, **1** = occasional; names not in the list rank **0** "
            "and follow alphabetically. The list is in `USAGE` in the script: a "
            "judgement written down, not a count over a corpus.", ""]
    for ns in NAMESPACES:
        miss = _rank(ns, after[ns]["missing"])
        ranked = [n for n in miss if USAGE.get(f"{ns}:{n}", 0) > 0]
        rest = [n for n in miss if USAGE.get(f"{ns}:{n}", 0) == 0]
        label = "torch" if ns == "torch" else f"torch.{ns}"
        out.append(f"### {label}: {len(miss)} uncovered")
        out.append("")
        if ranked:
            out.append("Used in training code: " + ", ".join(
                f"`{n}` ({USAGE[f'{ns}:{n}']})" for n in ranked) + ".")
            out.append("")
        if rest:
            out.append(f"Not in the usage list ({len(rest)}): " + ", ".join(
                f"`{n}`" for n in rest) + ".")
            out.append("")
    out += ["## Missing keywords of covered names", "",
            "Per namespace, the covered names whose torch signature has keywords ours does "
            "not accept (most used names first).", ""]
    for ns in NAMESPACES:
        km = after[ns]["kw_missing"]
        if not km:
            continue
        label = "torch" if ns == "torch" else f"torch.{ns}"
        items = [f"`{n}`: {', '.join(km[n])}" for n in _rank(ns, list(km))]
        out.append(f"- **{label}** ({len(km)} names): " + "; ".join(items))
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="a checkout to measure too (PYTHONPATH=DIR)")
    ap.add_argument("--before-label", default="a007c3d")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--json", action="store_true", help="print this checkout's figures as JSON")
    args = ap.parse_args(argv)
    import warnings
    warnings.simplefilter("ignore")
    after = measure()
    if args.json:
        json.dump(after, sys.stdout)
        return 0
    before = None
    if args.before:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.before))
        here = os.path.abspath(__file__)
        out = subprocess.run([sys.executable, here, "--json"], env=env, check=True,
                             capture_output=True, text=True, cwd=args.before).stdout
        before = json.loads(out)
    import torch

    import eager
    versions = f"torch {torch.__version__}, eager {getattr(eager, '__version__', '?')}, " \
               f"Python {sys.version.split()[0]}"
    text = report(after, before, args.before_label, versions)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    for ns in NAMESPACES:
        a = after[ns]
        b = f"  (before: {before[ns]['covered']}/{before[ns]['total']})" if before else ""
        print(f"{ns:14s} {a['covered']:4d}/{a['total']:<4d} {_pct(a['covered'], a['total'])}"
              f"{b}   keywords by name {a['kw_named']}/{a['kw_total']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
