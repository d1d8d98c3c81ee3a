#!/usr/bin/python3
"""A QUIC client that never finishes its handshake, for tests/e2e/serve_h3.sh.

It sends one valid QUIC v1 Initial packet (RFC 9001 §5: keys from the Initial salt and its
Destination Connection ID, AES-128-GCM, header protection) that carries the first bytes of a
ClientHello and never the rest, so a server accepts the connection and then waits for a
handshake that never comes. It prints how many datagrams the server sent back within --listen seconds (its ACKs and
retransmissions), then exits. Needs Debian's python3-cryptography.

usage: quic_initial.py PORT [--listen SECONDS] [--garbage]
  --garbage  send 1200 random bytes shaped as an Initial header instead (undecryptable)
"""
import argparse
import hashlib
import hmac
import os
import socket
import struct
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

INITIAL_SALT = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


def hkdf_extract(salt, ikm):
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def hkdf_expand_label(secret, label, length):
    full = b"tls13 " + label
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), hashlib.sha256).digest()
        out += block
        i += 1
    return out[:length]


def initial_packet(dcid, scid):
    secret = hkdf_expand_label(hkdf_extract(INITIAL_SALT, dcid), b"client in", 32)
    key = hkdf_expand_label(secret, b"quic key", 16)
    iv = hkdf_expand_label(secret, b"quic iv", 12)
    hp = hkdf_expand_label(secret, b"quic hp", 16)
    pn = 0
    # a CRYPTO frame with the first bytes of a ClientHello that announces 512 bytes and never
    # sends the rest, then PADDING: the datagram passes 1200 bytes
    hello = b"\x01\x00\x02\x00" + b"\x03\x03" + os.urandom(32)
    payload = b"\x06\x00" + struct.pack(">H", 0x4000 | len(hello)) + hello
    payload += b"\x00" * (1180 - len(payload))
    length = 4 + len(payload) + 16  # packet number, payload, AEAD tag
    header = bytes([0xC3]) + struct.pack(">I", 1)  # long header, Initial, 4-byte packet number
    header += bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    header += b"\x00" + struct.pack(">H", 0x4000 | length) + struct.pack(">I", pn)
    nonce = bytes(a ^ b for a, b in zip(iv, pn.to_bytes(12, "big")))
    sealed = AESGCM(key).encrypt(nonce, payload, header)
    pn_offset = len(header) - 4
    sample = sealed[0:16]  # the sample starts 4 bytes after the packet number's start
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(sample) + enc.finalize()
    out = bytearray(header + sealed)
    out[0] ^= mask[0] & 0x0F
    for i in range(4):
        out[pn_offset + i] ^= mask[1 + i]
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--listen", type=float, default=0.5)
    ap.add_argument("--garbage", action="store_true")
    a = ap.parse_args()
    dcid, scid = os.urandom(8), os.urandom(8)
    if a.garbage:
        pkt = bytes([0xC3]) + struct.pack(">I", 1) + bytes([8]) + dcid + bytes([8]) + scid + os.urandom(1200)
    else:
        pkt = initial_packet(dcid, scid)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(pkt, ("127.0.0.1", a.port))
    got, end = 0, time.monotonic() + a.listen
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            s.recvfrom(65536)
            got += 1
        except socket.timeout:
            break
    print(got)


if __name__ == "__main__":
    main()
