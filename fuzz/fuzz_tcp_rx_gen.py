#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Writes fuzz/corpus/tcp_rx/: seeds for fuzz_tcp_rx in its input format
(see the header comment of fuzz_tcp_rx.c): valid WRITE, READ request,
READ response, SEND (each kind), TERMINATE, with CRC on and off, and a
few broken ones (a bit flipped, a bad queue number, raw garbage)."""
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "corpus", "tcp_rx")


def u8(v):
    return struct.pack(">B", v & 0xff)


def u16(v):
    return struct.pack(">H", v & 0xffff)


def u32(v):
    return struct.pack(">I", v & 0xffffffff)


def tagged(kind, sel, off, last, data):
    return u8(kind) + u8(sel) + u16(off) + u8(last) + u16(len(data)) + data


def write(sel=0, off=0, data=b"w" * 100, last=1):
    return tagged(0, sel, off, last, data)


def read_resp(sel=4, off=0, data=b"r" * 200, last=1):
    return tagged(2, sel, off, last, data)


def read_req(sink_stag=0x1000, sink_to=0, size=64, sel=0, off=0):
    return u8(1) + u32(sink_stag) + u32(sink_to) + u16(size) + u8(sel) + \
        u16(off)


def send(kind=0, msn=1, mo=0, last=1, inv_sel=0, data=b"s" * 50):
    return u8(3) + u8(kind) + u8(msn) + u16(mo) + u8(last) + u8(inv_sel) + \
        u16(len(data)) + data


def term(layer_type=0x12, code=0x01):
    return u8(4) + u8(layer_type) + u8(code)


def raw(data):
    return u8(5) + u8(len(data)) + data


def flip(bit):
    return u8(6) + u16(bit)


def override(qn, msn):
    return u8(7) + u8(qn) + u32(msn)


seeds = {
    "write": write(),
    "write_two_segments": write(last=0, data=b"a" * 1000) +
    write(off=1000, data=b"b" * 1000),
    "write_beyond": write(off=4000, data=b"x" * 200),
    "write_below": write(off=0x8010, data=b"y" * 8),
    "write_bad_stag": write(sel=4),
    "read_req": read_req(),
    "read_req_beyond": read_req(size=65535, off=100),
    "read_req_raw_stag": read_req(sel=3) + u32(0xdeadbeef),
    "read_resp": read_resp(),
    "read_resp_short": read_resp(data=b"r" * 100, last=1),
    "read_resp_to_mr": read_resp(sel=1),
    "read_resp_bad_to": read_resp(off=8),
    "read_resp_split": read_resp(last=0, data=b"1" * 120) +
    read_resp(off=120, data=b"2" * 80),
    "send": send(),
    "send_inv": send(kind=1, inv_sel=0),
    "send_se": send(kind=2),
    "send_se_inv": send(kind=3, inv_sel=1),
    "send_two": send(data=b"1" * 10) + send(msn=1, data=b"2" * 20),
    "send_too_long": send(data=b"L" * 2000),
    "send_bad_msn": send(msn=9),
    "send_mo": send(mo=100, last=1),
    "send_unfinished": send(last=0, data=b"u" * 10),
    "send_inv_unfinished": send(kind=1, last=0, data=b"u" * 10),
    "send_zero_first": send(last=0, data=b"") + send(msn=1, data=b"z" * 10),
    "send_second_bad_crc": send(last=0, data=b"1" * 10) + flip(8 * 20) +
    send(msn=1, mo=10, data=b"2" * 10),
    "terminate": term(),
    "terminate_ddp": term(0x21, 0x02),
    "flip_write": flip(300) + write(),
    "flip_crc": flip(8 * 120) + send(),
    "bad_qn": override(7, 1) + send(),
    "raw_garbage": raw(bytes(range(64))),
    "raw_short_frame": raw(b"\x00\x40\x41\x00"),
    "mixed": write() + send() + read_req() + read_resp() + term(),
}

os.makedirs(out, exist_ok=True)
for name, body in seeds.items():
    for crc in (1, 0):
        for thr in (0, 4):
            flags = crc | thr | (2 if name.startswith("read_resp") else 0)
            fn = "%s_%s%s" % (name, "crc" if crc else "nocrc",
                              "_thr" if thr else "")
            with open(os.path.join(out, fn), "wb") as f:
                f.write(u8(flags) + body)
