"""Secrets never enter a capture; --mask replaces identities with stable, same-shaped placeholders."""

from __future__ import annotations

from gpuwise.capture.mask import Masker, find_serials
from gpuwise.capture.redact import REDACTED, redact_env


def test_credentials_are_redacted_and_named():
    env = {
        "AWS_SECRET_ACCESS_KEY": "abc",
        "HF_TOKEN": "hf_x",
        "TENCENTCLOUD_SECRET_ID": "id",
        "DB_PASSWORD": "pw",
        "GITHUB_API_KEY": "k",
        "MY_CREDENTIALS": "c",
        "DATABASE_URL": "postgres://u:hunter2@db/x",
        "NCCL_IB_HCA": "mlx5_0",
        "PATH": "/usr/bin",
        "PWD": "/root",
        "KEYBOARD_LAYOUT": "us",
        "NIX_SSL_CERT_FILE": "/etc/ssl/certs/ca.crt",
        "GOOGLE_APPLICATION_CREDENTIALS_PATH": "/k.json",
    }
    out, names = redact_env(env)
    assert names == sorted(
        [
            "AWS_SECRET_ACCESS_KEY",
            "HF_TOKEN",
            "TENCENTCLOUD_SECRET_ID",
            "DB_PASSWORD",
            "GITHUB_API_KEY",
            "MY_CREDENTIALS",
            "DATABASE_URL",
        ]
    )
    assert all(out[n] == REDACTED for n in names)
    assert out["NCCL_IB_HCA"] == "mlx5_0" and out["PWD"] == "/root" and out["KEYBOARD_LAYOUT"] == "us"


def test_mask_is_stable_and_keeps_shape():
    m = Masker(["gpu-node-17.cluster", "gpu-node-17"], ["1322621047823"])
    text = "host gpu-node-17.cluster alias gpu-node-17\nlink/ether 0c:42:A1:6e:3b:10 brd ff:ff:ff:ff:ff:ff\nagain 0c:42:a1:6e:3b:10\n<uuid>GPU-4f1b4c2a-1d3e-4b5f-8a9b-0c1d2e3f4a5b</uuid><serial>1322621047823</serial>\n"
    out = m.apply(text)
    assert "gpu-node-17" not in out and "0c:42" not in out.lower() and "1322621047823" not in out
    assert "host-1 alias host-2" in out
    assert out.count("02:00:00:00:00:01") == 2  # same MAC, any case -> same placeholder
    assert "ff:ff:ff:ff:ff:ff" in out  # broadcast is not an identity
    assert "GPU-00000000-0000-4000-8000-000000000001" in out
    assert m.apply(text) == out  # stable across calls


def test_find_serials_in_xml_text_and_json():
    texts = [
        "<serial>0324118029999</serial><serial>N/A</serial>",
        "    Serial Number                         : 1561320012345\n",
        '{"serial": "1650124007777"}',
    ]
    found = find_serials(texts)
    assert {"0324118029999", "1561320012345", "1650124007777"} <= set(found)
    assert Masker([], found).apply("N/A stays") == "N/A stays"


def test_short_hostnames_are_replaced_as_whole_tokens_only():
    m = Masker(["vm"], [])
    assert m.apply("vm kvm vm.local /vm/ xvm-1") == "host-1 kvm host-1.local /host-1/ xvm-1"
