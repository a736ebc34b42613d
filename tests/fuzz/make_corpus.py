#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/ (rerun after changing an input layout).

The Engine.IO and Socket.IO strings are what the reference JavaScript encoders produce (engine.io-parser
2.x and 5.x, socket.io-parser 4.x); the WebSocket seeds are real client (masked) and server frames; the
HTTP seeds are the requests socket.io-client and browsers send.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        os.remove(os.path.join(d, old))
    for name, data in seeds.items():
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


# ---- Engine.IO: raw packets and polling bodies ----
OPEN = '0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}'
engineio = {
    "open_v4": OPEN,
    "ping_probe": "2probe",
    "pong_probe": "3probe",
    "upgrade": "5",
    "noop": "6",
    "sio_event": '42["chat message","hi"]',
    "v4_payload": "4hello\x1ebAQID\x1e2",
    "v4_payload_sio": '40\x1e42["a",1]\x1e42/chat,["b"]',
    "v3_text_payload": "8:4héllo😀6:2probe",
    "v3_b64_payload": "3:4hi6:b4AQID",
    "v3_open_payload": f"{len(OPEN)}:{OPEN}2:40",
    "v3_binary_payload": b"\x00\x04\xff4h\xc3\xa9\x01\x04\xff\x04\x01\x02\x03",
    "v3_binary_frame": b"\x04\x01\x02\x03",
}

# ---- Socket.IO: byte 0 = attachment count, parts separated by 0xff ----
def sio(attachments, *parts):
    out = bytes([attachments])
    return out + b"\xff".join(p.encode("utf-8") if isinstance(p, str) else p for p in parts)


socketio = {
    "connect": sio(0, "0"),
    "connect_auth": sio(0, '0/admin,{"token":"abc"}'),
    "disconnect": sio(0, "1/chat,"),
    "event": sio(0, '2["hello",{"a":1}]'),
    "event_ack_nsp": sio(0, '2/chat,12["msg","x"]'),
    "ack": sio(0, '3/chat,7["ok",1]'),
    "connect_error": sio(0, '4{"message":"Not authorized"}'),
    "connect_error_v2": sio(0, '4/chat,"Invalid namespace"'),
    "binary_event": sio(2, '52-/chat,3["up",{"f":{"_placeholder":true,"num":0},"l":[{"_placeholder":true,"num":1}]}]',
                        b"\x01\x02", b"\x03"),
    "binary_ack": sio(1, '61-7[{"_placeholder":true,"num":0}]', b"\x09"),
    "binary_then_text": sio(1, '51-["e",{"_placeholder":true,"num":0}]', b"att", '2["next"]'),
    "escapes": sio(0, '2["a\\"b\\u00e9\\n",null,true,1.5e3]'),
    "sequence": sio(0, "0/chat,{}", '2/chat,["x"]', '3/chat,1[]', "1/chat,"),
}

# ---- WebSocket: byte 0 = chunk-size count k (bits 0-2) | limit (bits 3-4), then k chunk sizes ----
MASK = b"\x37\xfa\x21\x3d"


def frame(opcode, payload, fin=True, mask=MASK, force64=False):
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    b0 = (0x80 if fin else 0) | opcode
    mbit = 0x80 if mask else 0
    n = len(payload)
    if force64:
        head = struct.pack("!BBQ", b0, mbit | 127, n)
    elif n < 126:
        head = struct.pack("!BB", b0, mbit | n)
    elif n <= 0xFFFF:
        head = struct.pack("!BBH", b0, mbit | 126, n)
    else:
        head = struct.pack("!BBQ", b0, mbit | 127, n)
    if mask:
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        head += mask
    return head + payload


def ws(stream, chunks=(), limit=3):
    return bytes([len(chunks) | (limit << 3)]) + bytes(chunks) + stream


websocket = {
    "rfc_masked_hello": ws(frame(1, "Hello")),
    "rfc_unmasked_fragments": ws(frame(1, "Hel", fin=False, mask=None) + frame(0, "lo", mask=None)),
    "rfc_unmasked_ping": ws(frame(9, "Hello", mask=None)),
    "engineio_upgrade": ws(frame(1, "2probe") + frame(1, "5") + frame(1, '42["chat","hi"]'), chunks=(2, 6)),
    "fragments_with_ping": ws(frame(1, "Hel", fin=False) + frame(9, "p") + frame(0, "lo é", fin=False) +
                              frame(0, "!"), chunks=(0, 1, 2)),
    "binary_16bit": ws(frame(2, bytes(range(256)) * 1), chunks=(100,)),
    "binary_64bit": ws(frame(2, b"\x00" * 300, force64=True)),
    "close_normal": ws(frame(8, b"\x03\xe8bye")),
    "close_empty_and_pong": ws(frame(10, "") + frame(8, b"")),
    "server_frames": ws(frame(1, "40", mask=None) + frame(2, b"\x01\x02", mask=None) + frame(8, b"\x03\xe9", mask=None)),
    "too_big": ws(frame(2, b"x" * 40), limit=0),
    "bad_utf8": ws(frame(1, b"ok\xc3", fin=False) + frame(0, b"(")),
    "utf8_split": ws(frame(1, b"\xf0\x9f", fin=False) + frame(0, b"\x98\x80"), chunks=(0,)),
}

# ---- HTTP: whole requests as socket.io-client and browsers send them ----
def http(method, target, headers=(), body=b""):
    lines = [f"{method} {target} HTTP/1.1", "Host: localhost:3000"] + list(headers)
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


WS_HEADERS = ("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Extensions: permessage-deflate")
http_seeds = {
    "v4_handshake": http("GET", "/socket.io/?EIO=4&transport=polling&t=OqbNPyh", ("Accept: */*",)),
    "v4_poll": http("GET", "/socket.io/?EIO=4&transport=polling&t=OqbNQ1a&sid=lv_VI97HAXpY6yYWAAAC"),
    "v4_post": http("POST", "/socket.io/?EIO=4&transport=polling&t=OqbNQ1b&sid=lv_VI97HAXpY6yYWAAAC",
                    ("Content-Type: text/plain;charset=UTF-8",), '40\x1e42["chat","hi"]'.encode()),
    "v4_upgrade": http("GET", "/socket.io/?EIO=4&transport=websocket&sid=lv_VI97HAXpY6yYWAAAC", WS_HEADERS),
    "v4_ws_direct": http("GET", "/socket.io/?EIO=4&transport=websocket", WS_HEADERS),
    "v3_handshake_b64": http("GET", "/socket.io/?EIO=3&transport=polling&t=N8hyd6w&b64=1"),
    "v3_post_binary": http("POST", "/socket.io/?EIO=3&transport=polling&sid=abc",
                           ("Content-Type: application/octet-stream",), b"\x00\x02\xff40"),
    "preflight": http("OPTIONS", "/socket.io/?EIO=4&transport=polling",
                      ("Origin: http://example.com", "Access-Control-Request-Method: POST",
                       "Access-Control-Request-Headers: content-type")),
    "chunked_post": ("POST /socket.io/?EIO=4&transport=polling&sid=x HTTP/1.1\r\nHost: a\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n2\r\n40\r\n0\r\n\r\n").encode(),
    "percent_encoded": http("GET", "/socket.io/?EIO=4&transport=polling&sid=a%2Bb%3D&x=%E2%82%AC&y=+"),
    "bad_version": http("GET", "/socket.io/?EIO=5&transport=polling"),
    "bad_transport": http("GET", "/socket.io/?EIO=4&transport=flashsocket"),
    "other_path": http("GET", "/metrics", ("Connection: keep-alive",)),
}

# ---- auth: JWTs (HS256 over "fuzz-secret"), proofs and signed bodies ----
def _jwt(header, payload, secret=b"fuzz-secret"):
    import base64, hashlib, hmac, json
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    head = b64(json.dumps(header, separators=(",", ":")).encode())
    body = b64(json.dumps(payload, separators=(",", ":")).encode())
    sig = b64(hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


auth_seeds = {
    "jwt_valid": _jwt({"alg": "HS256", "typ": "JWT"}, {"realm": "r", "role": "both", "exp": 2000000000}),
    "jwt_expired": _jwt({"alg": "HS256"}, {"realm": "r", "role": "both", "exp": 1}),
    "jwt_none": _jwt({"alg": "none"}, {"realm": "r", "role": "both"}),
    "jwt_padded": _jwt({"alg": "HS256"}, {"realm": "r", "role": "both"}) + "=",
    "proof": '{"timestamp":1700000000000,"nonce":"0123456789abcdef","signature":"' + "ab" * 32 + '"}',
    "proof_string_ts": '{"timestamp":"1700000000000","nonce":7,"signature":"AB"}',
    "body_nested": '{"command":"add_realm","realm":"r","b":[1,2.5,-0,1e21,{"z":null,"a":"\\u00e9\\n"}]}',
    "body_unicode": '{"\\ud83d\\ude00":1,"\\uffff":2,"a":"\\ud800"}',
}

# ---- tyo-mq requests: a request object's text (sent raw and as a JSON string), chunks, durations ----
requests_seeds = {
    "produce_escaped_keys": '{"ev\\u0065nt":"e","\\u0066rom":"p","from":"q","msg\\u0049d":"m1","'
                            + "k" * 200 + '\\u0041":1,"message":{"a":[1,"]"]}}',
    "subscribe": '{"event":"e","producer":"p","consumer":"w","consumer_id":"w","durable":true,"ack":true,'
                 '"ack_timeout":"30s","retry":{"max_attempts":5,"delay":"1s","backoff":"exponential"}}',
    "subscribe_options": '{"event":"t/+/x","options":{"mode":"topic","group":"g","requireAck":1,"ackTimeout":2.5}}',
    "produce": '{"event":"e","from":"p","message":{"a":[1,"\\u00e9",null]},"ttl":"1.5h","guaranteed":true,'
               '"to":["x"],"enc":{"alg":"A"},"contentType":"application/json"}',
    "produce_lifespan": '{"event":"e","from":"p","message":"m","lifespan":-1,"method":"broadcast","broadcast":"realm"}',
    "chunk": '{"transferId":"t-1","index":1,"total":3,"data":"{\\"event\\":"}',
    "ack": '{"msgId":"msg-lk3j2-0123456789ab"}',
    "ack_number": '{"id":12345678901234567890}',
    "registration": '{"name":"p","id":"sock-1","default_ttl":"10m"}',
    "inner_invalid": '{"event":"e","from":"p","message":{]}',
    "inner_deep": '{"event":"e","from":"p","message":' + "[" * 1025 + "]" * 1025 + "}",
    "inner_surrogate": '{"event":"e","from":"p","message":"\\ud800"}',
    "ttl_digits": '{"event":"e","from":"p","ttl":"' + "9" * 2000 + 's"}',
    "key_publish": '{"identity":"dev","key_id":"dev-1","alg":"ecdh-es-p256-a256gcm","public_key":"QkFTRTY0LVBVQktFWQ=="}',
    "key_publish_unicode": '{"identity":"d\\u00e9v","key_id":"\\ud83d\\ude00","public_key":"a-_b="}',
    "prekey_publish": '{"identity":"alice","identity_key":"SUQ=","registration_id":4242,"device_id":1,'
                      '"signed_prekey_id":7,"signed_prekey":"U1BL","signed_prekey_sig":"U0lH","kyber_prekey_id":9,'
                      '"kyber_prekey":"S1lC","kyber_prekey_sig":"S1NJRw","one_time_prekeys":[{"id":1,"key":"T1RQMQ"},'
                      '{"id":4294967295,"key":"T1RQMg=="}]}',
    "prekey_take": '{"identity":"alice"}',
    "duration": "1.25h",
    "duration_bad": "--1e400ms",
}

# ---- relay namespaces: settings documents (then an event name on the last line), events, packet data ----
relay_seeds = {
    "remote_block": '{"remote":{"relay":{"clipboard.set":{"from":"viewer","to":"agent","max_bytes":100},'
                    '"input.*":{"enabled":false},"rtc.ice":{"to":"opposite"}},"relay_unlisted":"off",'
                    '"allow":["frame","rtc.*","clipboard.set"],"ticket_ttl_ms":60000,"max_frame_bytes":4194304}}\nrtc.ice',
    "namespaces": '{"namespaces":{"/chat":{"relay":{"msg":{"from":"viewer","to":"agent"},"a.b.*":{"to":"viewers"}}},'
                  '"/legacy":{"module":"./x.js","options":{"relayUnlisted":false}},"/":{},"/remote":{}}}\na.b.c',
    "bad_rule": '{"remote":{"relay":{"x":{"to":"up"}}}}',
    "event_input": "input.mouse",
    "event_dots": "a." * 300 + "x",
    "event_reserved": "auth_ok",
    "packet_opaque": '["multi",1,"two",{"_placeholder":true,"num":0},null]',
    "packet_frame_b64": '["frame",{"session_id":"s","frame":"/9j/4AAQ"}]',
    "packet_frame_bin": '["frame",{"frame":{"_placeholder":true,"num":0}}]',
    "packet_bare": '["bare"]',
}

# ---- the one-pass JSON validator: JSON texts (packets' data arrays, and other roots) ----
json_outline_seeds = {
    "produce": '["PRODUCE",{"event":"placed","from":"shop","message":{"n":1,"s":"x\\"y"},"ttl":1000}]',
    "subscribe": '["SUBSCRIBE",{"event":"e","producer":"p","consumer":"c","options":{"durable":true,'
                 '"retry":{"max_attempts":3}}}]',
    "ack_mixed": '["ACK",{"msgId":"msg-1"},2,[true,false,null],-1.5e-3,"\\ud834\\udd1e"]',
    "object_root": '{"a":[1,{"b":"\\u00e9"}],"k\\"q":123456789012345678901234567890}',
    "nested": '[[[[[]]]],{},[{}],"\\u0000"]',
}

if __name__ == "__main__":
    write("fuzz_engineio", engineio)
    write("fuzz_socketio", socketio)
    write("fuzz_websocket", websocket)
    write("fuzz_http", http_seeds)
    write("fuzz_auth", auth_seeds)
    write("fuzz_requests", requests_seeds)
    write("fuzz_relay", relay_seeds)
    write("fuzz_json_outline", json_outline_seeds)
    total = sum(len(s) for s in (engineio, socketio, websocket, http_seeds, auth_seeds, requests_seeds, relay_seeds,
                                 json_outline_seeds))
    print(f"wrote {total} seeds under {os.path.join(HERE, 'corpus')}")
