#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<name>/.

    tests/fuzz/make_seeds.py

Deterministic: re-running it rewrites the same files. Needs numpy (for the
.npy seeds). Each seed is a small valid input of its target, in the format
its _fuzz.cc file describes, so that fuzzing starts deep in the code.
"""

import io
import json
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(name, seeds):
    d = os.path.join(CORPUS, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for i, (label, data) in enumerate(seeds):
        if isinstance(data, str):
            data = data.encode()
        with open(os.path.join(d, f"{i:02d}-{label}"), "wb") as f:
            f.write(data)


# --- protobuf wire format, for tprobe.v1 (proto/tprobe/v1/control.proto) --

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def vint(num, v):
    return field(num, 0, varint(v))


def blob(num, data):
    if isinstance(data, str):
        data = data.encode()
    return field(num, 2, varint(len(data)) + data)


# --- configs ------------------------------------------------------------

CONFIGS = [
    ("empty", "{}"),
    ("statistics-l0", json.dumps({
        "task": "statistics", "dump_path": "./dump", "rank": [], "step": [],
        "level": "L0", "statistics": {"scope": [], "list": [],
                                      "data_mode": ["all"],
                                      "summary_mode": "statistics"}})),
    ("tensor-mix", json.dumps({
        "task": "tensor", "dump_path": "/tmp/d", "rank": [0, "2-4"],
        "step": ["0-2", 5], "level": "mix",
        "tensor": {"scope": ["Module.a.A.forward.0", "Module.b.B.forward.0"],
                   "list": ["relu", "conv"],
                   "data_mode": ["forward", "input"]}})),
    ("overflow", json.dumps({
        "task": "overflow_check", "dump_path": "d", "level": "L1",
        "overflow_check": {"overflow_nums": -1, "check_mode": "all"}})),
    ("md5-tprobe", json.dumps({
        "task": "statistics", "dump_path": "d", "async_dump": False,
        "enable_dataloader": False, "precision": "high",
        "statistics": {"summary_mode": "md5", "data_mode": ["backward"]},
        "tprobe": {"socket": "/run/tprobe/x.sock", "ring_bytes": 65536,
                   "ring_count": 2, "policy": "drop",
                   "block_timeout_ms": 5, "exit_timeout_ms": 0}})),
    ("bad-key", '{"task": "statistics", "nope": 1, "step": [null, 1.5]}'),
    # msprobe 26.2's keys: without effect (warned), dump_enable, "3" steps.
    ("msprobe26-keys", json.dumps({
        "task": "tensor", "dump_enable": False, "seed": 1, "acl_config": "a",
        "rank": [1, "0", "4-6"], "step": ["3"],
        "tensor": {"bench_path": "b", "diff_nums": 2, "slice": [],
                   "summary_mode": "md5"}})),
]

# --- .npy files -----------------------------------------------------------


def npy(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


NPYS = [
    ("f4-2x3", npy(np.arange(6, dtype=np.float32).reshape(2, 3))),
    ("f2-empty", npy(np.zeros((0, 4), dtype=np.float16))),
    ("i8-scalar", npy(np.array(-7, dtype=np.int64))),
    ("b1", npy(np.array([True, False, True]))),
    ("u1-i1", npy(np.array([1, 255], dtype=np.uint8))),
    ("c8", npy(np.array([1 + 2j], dtype=np.complex64))),
    ("f8-v2", npy(np.array([np.nan, np.inf, -1.5]), version=(2, 0))),
    ("i2-i4", npy(np.array([[1], [2]], dtype=np.int32))),
]

# --- .pt files (torch.save, msprobe's PyTorch tensor dumps) ----------------


def pts():
    """torch.save of plain tensors; none where torch is missing."""
    try:
        import torch
    except ImportError:
        return []

    def pt(tensor):
        buf = io.BytesIO()
        torch.save(tensor, buf)
        return buf.getvalue()

    return [
        ("f4-2x3", pt(torch.arange(6, dtype=torch.float32).reshape(2, 3))),
        ("bf16", pt(torch.tensor([1.5, -2.0], dtype=torch.bfloat16))),
        ("i8-scalar", pt(torch.tensor(-7))),
        ("view", pt(torch.arange(10.0)[2:5].clone())),
        ("param", pt(torch.nn.Parameter(torch.ones(2, 2)))),
    ]


# --- statistic.csv --------------------------------------------------------

CSV_HEADER = ("Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,"
              "Data Type,Shape,Max Value,Min Value,Avg Value,L2Norm Value\n")


def csv_rows(rows):
    out = ""
    for t, name, dtype, shape, stats in rows:
        op = "TensorDump-op1_dump_tensor_data_" + name.replace(".", "-")
        out += f"TensorDump,{op},1,0,{t},input,0,64,string,\"()\",,,,,\n"
        out += (f"TensorDump,{op}|x,1,0,{t},input,1,24,{dtype},\"{shape}\","
                + ",".join(stats) + ",\n")
    return out


CSVS = [
    ("model", CSV_HEADER + csv_rows([
        (1700000000000000001, "Cell.model.Model.forward.input.0", "float32",
         "(2,4096)", ["3", "-3", "0.5", "1024.5"]),
        (1700000000000000002, "Cell.model.layers.0.Block.forward.input.0",
         "bfloat16", "(2,4096)", ["inf", "-inf", "", "null"]),
        (1700000000000000003, "Cell.model.layers.0.Block.forward.output.0",
         "float16", "()", ["nan", "True", "N/A", "1e-05"]),
        (1700000000000000004, "Cell.model.Model.forward.output.0", "int64",
         "(1,)", ["1", "1", "1", "1"]),
        (1700000000000000005, "Cell.model.Model.backward.input.0", "float32",
         "(3)", ["2", "0", "1", "2"]),
    ])),
    ("repeat", CSV_HEADER + csv_rows([
        (10, "Cell.a.A.forward.input.0", "float32", "(1,)", ["1", "1", "1", "1"]),
        (11, "Cell.a.A.forward.input.0", "float32", "(1,)", ["1", "1", "1", "1"]),
        (12, "Cell.a.b.B.forward.output.0", "float32", "(1,)",
         ["2", "2", "2", "2"]),
    ])),
    ("quoted-min", 'Op Name,Data Type,Shape,Timestamp,Slot\r\n'
     '"dump_tensor_data/Cell-m-M-forward-input-0","float32","(2,3)",5,1\r\n'
     '"x ""y"",z",int8,"()",6,1\r\n'),
]

# --- TensorDump files ([u8 name length][name][u16 size][bytes], repeated) --


def dump_files(files):
    out = b""
    for name, data in files:
        name = name.encode()
        out += struct.pack("<B", len(name)) + name
        out += struct.pack("<H", len(data)) + data
    return out


F32 = npy(np.array([1.0, -2.0, 3.5], dtype=np.float32))
BF16_AS_F32 = npy(np.array([[0.5, 4.0]], dtype=np.float32))
I64 = npy(np.array([3], dtype=np.int64))
TENSOR_DUMPS = [
    ("model", dump_files([
        ("Cell.model.Model.forward.input.0_float32_1.npy", F32),
        ("Cell.model.layers.0.Block.forward.input.0_bfloat16_2.npy",
         BF16_AS_F32),
        ("Cell.model.layers.0.Block.forward.output.0_bfloat16_3.npy",
         BF16_AS_F32),
        ("Cell.model.Model.forward.output.0_int64_4.npy", I64),
    ])),
    ("repeat-in", dump_files([
        ("Cell.a.A.forward.input.0_float32_1.npy", F32),
        ("Cell.a.A.forward.input.0_float32_2.npy", F32),
        ("Cell.a.A.backward.output.0_in_float32_3.npy", F32),
        ("Cell.a.A.forward.0.input.0.npy", F32),
    ])),
]

# --- ring records (record_fuzz.cc) ----------------------------------------

INTERN, CALL_BEGIN, CALL_END, TENSOR, CHUNK, ENTRY = 1, 2, 3, 4, 5, 6
FLOAT32, INT64 = 0, 8  # tprobe::DType values, from common/dtype.h

# An entry's body: a flat stream of tagged values (common/record/record.h,
# ValueTag), little-endian and unaligned.
(T_NULL, T_FALSE, T_TRUE, T_INT, T_FLOAT, T_STR, T_KEY, T_TENSOR_REF, T_LIST,
 T_DICT, T_TYPED, T_END) = range(12)


def tag(t):
    return bytes([t])


def tagged_text(t, s):
    s = s.encode()
    return tag(t) + struct.pack("<I", len(s)) + s


def v_null():
    return tag(T_NULL)


def v_bool(b):
    return tag(T_TRUE if b else T_FALSE)


def v_int(i):
    return tag(T_INT) + struct.pack("<q", i)


def v_float(x):
    return tag(T_FLOAT) + struct.pack("<d", x)


def v_str(s):
    return tagged_text(T_STR, s)


def v_tensor(ref):
    return tag(T_TENSOR_REF) + struct.pack("<I", ref)


def v_list(items):
    return tag(T_LIST) + b"".join(items) + tag(T_END)


def items_body(items):
    return b"".join(tagged_text(T_KEY, k) + v for k, v in items)


def v_dict(items):
    return tag(T_DICT) + items_body(items) + tag(T_END)


def v_typed(type_name, value):
    return tagged_text(T_TYPED, type_name) + value


def entry(items):
    return items_body(items)  # the body's top-level items: key, value


def rec(ring, rtype, payload):
    return struct.pack("<BHH", ring, rtype, len(payload)) + payload


def intern(ring, rid, kind, text):
    return rec(ring, INTERN, struct.pack("<IB3x", rid, kind) + text.encode())


def call(ring, begin, seq, step, name_id, kind, direction=0):
    return rec(ring, CALL_BEGIN if begin else CALL_END,
               struct.pack("<QIIBB6x", seq, step, name_id, kind, direction))


def tensor(ring, ref, dtype, shape, nbytes):
    return rec(ring, TENSOR,
               struct.pack("<QIBBBx", nbytes, ref, dtype, len(shape), 0)
               + b"".join(struct.pack("<q", d) for d in shape))


def chunk(ring, ref, offset, data):
    return rec(ring, CHUNK, struct.pack("<QII", offset, ref, 0) + data)


def entry_rec(ring, seq, step, name_id, stack_id, body):
    return rec(ring, ENTRY,
               struct.pack("<QIIII", seq, step, name_id, stack_id, 0) + body)


def call_entry(ring, seq, name_id, ref, values):
    data = np.array(values, dtype=np.float32).tobytes()
    return (tensor(ring, ref, FLOAT32, [len(values)], len(data))
            + chunk(ring, ref, 0, data[:4]) + chunk(ring, ref, 4, data[4:])
            + entry_rec(ring, seq, 0, name_id, 3, entry([
                ("input_args", v_list([v_tensor(ref), v_int(-3),
                                       v_float(0.25), v_null()])),
                ("input_kwargs", v_dict([("inplace", v_bool(False)),
                                         ("mode", v_str("mean"))])),
                ("output", v_list([v_typed("slice", v_list([v_int(0)]))])),
            ])))


RECORDS = [
    # statistics, mix: a module around an API, on two rings.
    ("stats-mix", bytes([0x08])
     + intern(0, 1, 0, "Module.fc.Linear.forward.0")
     + intern(0, 2, 0, "Functional.relu.0.forward")
     + intern(0, 3, 1, "File a.py, line 1, in f\0File b.py, line 2, in g")
     + call(0, True, 1, 0, 1, 0)
     + call(0, True, 2, 0, 2, 1)
     + call_entry(0, 3, 2, 1, [1.0, -2.0, float("nan")])
     + call(0, False, 4, 0, 2, 1)
     + intern(1, 4, 0, "Tensor.add.0.backward")
     + call_entry(1, 5, 4, 1, [0.5, 0.5])
     + call(0, False, 6, 0, 1, 0)),
    # tensor task, L1: tensor files; an int64 tensor; an incomplete one.
    ("tensor-l1", bytes([0x05])
     + intern(0, 1, 0, "Functional.conv2d.0.forward")
     + intern(0, 3, 1, "stack")
     + tensor(0, 7, INT64, [2, 1], 16) + chunk(0, 7, 0, struct.pack("<qq", 4, -4))
     + tensor(0, 8, FLOAT32, [4], 16) + chunk(0, 8, 0, b"\0" * 8)
     + entry_rec(0, 1, 0, 1, 3, entry([
         ("input_args", v_list([v_tensor(7), v_tensor(8)])),
         ("output", v_tensor(7))]))),
    # overflow_check: an inf output.
    ("overflow", bytes([0x02])
     + intern(0, 1, 0, "Functional.exp.0.forward")
     + call_entry(0, 1, 1, 1, [float("inf"), 1.0])),
    # md5 summary, a step change.
    ("md5-steps", bytes([0x03])
     + intern(0, 1, 0, "Functional.mul.0.forward")
     + call_entry(0, 1, 1, 1, [2.0])
     + entry_rec(0, 2, 1, 1, 0, b"")),
    # raw ring: two records and padding, head past them.
    ("raw", bytes([0x10]) + struct.pack("<QQ", 48, 0)
     + struct.pack("<IHH", 8, INTERN, 0) + struct.pack("<IB3x", 1, 0)
     + struct.pack("<IHH", 3, INTERN, 0) + b"abc" + b"\0" * 5
     + struct.pack("<IHH", 8, 0, 0) + b"\0" * 8),
    # raw ring whose tail is not aligned, 2 bytes before the ring's end
    # (the RingReader once read past the ring there).
    ("raw-unaligned-tail", bytes([0x10]) + struct.pack("<QQ", 4110, 4094)),
]

# --- control frames (control_fuzz.cc) -------------------------------------


def request(body_field, body, version=3):
    return vint(1, version) + blob(body_field, body)


def frame(msg, connection=0):
    """A turn: the connection (0: the rank, 1: the CLI), then the frame."""
    return bytes([connection]) + struct.pack("<I", len(msg)) + msg


# tprobe.v1.Config: task statistics (0, the default), dump_path "dump",
# level mix, every direction and side, overflow_nums 1 (its value outside
# overflow_check), one 64 KiB ring; the checks of config::FromProto pass.
CONFIG = (blob(2, "dump") + vint(5, 2) + blob(8, vint(1, 1) + vint(2, 1)
                                             + vint(3, 1) + vint(4, 1))
          + vint(10, 1) + vint(12, 65536) + vint(13, 1))
REGISTER = request(2, vint(1, 1) + vint(2, 1) + vint(3, 0) + vint(5, 1)
                   + vint(6, 65536) + blob(7, "pytorch") + vint(8, 3)
                   + blob(9, CONFIG))
START, STOP, STEP, STATUS, SHUTDOWN, FLUSH, GOODBYE = 3, 4, 5, 6, 7, 8, 9
CONFIGURE, FETCH_CONFIG = 10, 11
CONTROLS = [
    ("trainer", frame(REGISTER) + frame(request(START, vint(1, 0)))
     # a Step with its ledger: 2 records produced and committed, ring cut 2
     + frame(request(STEP, vint(1, 0) + vint(2, 1)
                     + blob(3, vint(1, 2) + vint(2, 2) + blob(7, varint(2)))))
     + frame(request(FLUSH, b"")) + frame(request(STATUS, b""))
     + frame(request(GOODBYE, vint(3, 1)))),
    ("cli-live", frame(REGISTER)
     + frame(request(START, vint(2, 1) + vint(3, 2) + vint(4, 0x7FFFFFFF)
                     + blob(5, varint(0) + varint(3))), 1)
     + frame(request(STOP, vint(2, 1) + blob(3, varint(0))), 1)
     # tprobe configure (level L1), then the rank takes it up at step 1
     + frame(request(CONFIGURE, blob(1, CONFIG + vint(5, 0))), 1)
     + frame(request(FETCH_CONFIG, vint(1, 1)))),
    ("cli", frame(request(STATUS, b""), 1) + frame(request(STOP, vint(2, 1)), 1)
     + frame(request(FLUSH, b""), 1) + frame(request(SHUTDOWN, b""), 1)),
    # a request of another version, one without a body, bytes
    # that are no Request, then a frame over the cap, which closes the
    # connection
    ("bad", frame(request(STATUS, b"", version=7)) + frame(b"\x08\x01")
     + frame(b"\xff\xff") + bytes([0]) + struct.pack("<I", 1 << 30)),
]


# --- stack.json (tprobe compare, --layer-mapping) -------------------------

def stack_line(path, func):
    return f"File {path}, line 7, in {func}, \n x = f(y)"


MS_WRAPPER = stack_line("/p/msprobe/mindspore/dump/hook_cell/wrap_api.py",
                        "api_function").replace("x = f(y)",
                                                "return ApiTemplate(n)(x)")
GETITEM = stack_line("/p/site-packages/mindspore/common/tensor.py",
                     "__getitem__")
NORM = stack_line("/p/package/mindspore/ops/math_func.py", "norm")
USER = stack_line("/net/model.py", "construct")
STACK_JSONS = [
    # msprobe 8.x's form: entry -> lines
    ("keyed", json.dumps({
        "Tensor.__add__.0.forward": [MS_WRAPPER, GETITEM, USER],
        "Tensor.__mul__.0.forward": [MS_WRAPPER, NORM, USER],
        "Cell.block.Block.forward.0": [USER]}, indent=1)),
    # 26.x's indexed form
    ("indexed", json.dumps({
        "0": [["Tensor.__add__.0.forward", "Tensor.__mul__.0.forward"],
              [MS_WRAPPER, GETITEM, USER]],
        "1": [["Cell.block.Block.forward.0"], [USER]]})),
    ("empty", "{}"),
    # lines msprobe cannot read, values that are no lists
    ("odd", json.dumps({"Tensor.__add__.0.forward": [
        "The call stack retrieval failed.", 7, None],
        "Tensor.__mul__.0.forward": "x", "Other.x.0.forward": []})),
]

# tprobe compare's mapping files (tools/compare/input/mapping_file.h): the
# four forms msprobe ships, JSON, and what yaml.safe_load resolves besides.
MAPPINGS = [
    ("name", "fc1.Dense: fc1.Linear\n'Cell.b': \"Module.b\"  # quoted\n"),
    ("name-json", json.dumps({"Cell.fc.Dense.forward.0.input.0":
                              "Module.fc.Linear.forward.0.input.0"})),
    ("api", "# msprobe's api_mapping.yaml\n"
            "- ms_api: Mint.sub\n  pt_api: 'Torch.sub'\n"
            "  ms_args: [0, 1]\n  pt_args:\n    - 1\n    - \"0\"\n"
            "-\n  pt_api: Torch.mul\n  ms_api: Mint.mul\n"
            "  ms_parameters_grad: [weight]\n"
            "  pt_parameters_grad: [weight]\n"),
    ("api-json", json.dumps([{"ms_api": "Mint.add", "pt_api": "Torch.add",
                              "ms_args": [0, 1], "pt_args": [1, 0]}])),
    ("layer", "Cell:\n  body: trunk(Block)\nBlock:\n  dense: wrong\n"
              "  dense.MatMul: proj.linear\n  'dense': proj\nEmpty: {}\n"),
    ("anchors", "base: &b {x: 1, y: [a, b]}\nmerged:\n  <<: *b\n  y: 2\n"
                "list: [*b, *b]\n"),
    ("scalars", "a: yes\nb: 0x1F\nc: 1_000\nd: .inf\ne: ~\nf: 1:30\n"
                "g: 0o7\nh: 1e3\ni: '010'\n1: one\ntrue: t\nnull: n\n"),
    ("multiline", "folded: >\n  one\n  two\nliteral: |\n  a\n  b\n"
                  "plain: a\n  b\n"),
    ("bad", "- ms_api: [Mint.sub\n"),
]


def main():
    write("config", CONFIGS)
    write("npy", NPYS)
    seeds = pts()
    if seeds:  # without torch the stored .pt seeds stay
        write("pt", seeds)
    write("statistic_csv", CSVS)
    write("tensor_dump", TENSOR_DUMPS)
    write("record", RECORDS)
    write("control", CONTROLS)
    write("stack_json", STACK_JSONS)
    write("mapping", MAPPINGS)


if __name__ == "__main__":
    main()
