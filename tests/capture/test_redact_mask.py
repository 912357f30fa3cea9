"""Secrets never enter a capture; --mask replaces identities with stable, same-shaped placeholders."""

from __future__ import annotations

from gpuwise.capture.mask import Masker, find_serials
from gpuwise.capture.redact import REDACTED, redact_env, redact_text


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


# 40 credential variables as they appear on ML machines: clouds, databases, trackers, model hubs, CI.
# Values are fake but shaped like the real ones (so the value rules are exercised too).
CREDENTIALS = {
    # clouds
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjEXAMPLE",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AZURE_CLIENT_SECRET": "x~8Q~abc",
    "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=bXk=",
    "ARM_CLIENT_SECRET": "s3cr3t",
    "GOOGLE_API_KEY": "AIzaSyEXAMPLE",
    "TENCENTCLOUD_SECRET_KEY": "k",
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "k",
    "DIGITALOCEAN_ACCESS_TOKEN": "dop_v1_abc",
    "LAMBDA_API_KEY": "secret_abc",
    "RUNPOD_API_KEY": "rp",
    "OCI_CLI_KEY_CONTENT": "-----BEGIN RSA PRIVATE KEY-----",
    # databases and queues
    "PGPASSWORD": "hunter2",
    "MYSQL_PWD": "hunter2",
    "REDIS_URL": "redis://:pw@cache:6379/0",
    "MONGODB_URI": "mongodb+srv://app:pw@cluster0.example.net/db",
    "AMQP_URL": "amqp://guest:guest@rabbit:5672/",
    "MINIO_ROOT_PASSWORD": "minio123",
    "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE": "p",
    # trackers and monitoring
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "COMET_API_KEY": "c",
    "NEPTUNE_API_TOKEN": "eyJhcGlfYWRkcmVzcyI6Imh0dHBzOi8vYXBwLm5lcHR1bmUuYWkifQ==",
    "MLFLOW_TRACKING_PASSWORD": "p",
    "SENTRY_DSN": "https://abc123@o1.ingest.sentry.io/42",
    "DD_API_KEY": "d",
    "NEW_RELIC_LICENSE_KEY": "n",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXX",
    # model hubs and AI APIs
    "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "HUGGING_FACE_HUB_TOKEN": "hf_x",
    "OPENAI_API_KEY": "sk-proj-abcdefghijklmnopqrstuvwx",
    "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnopqrstu",
    "NGC_API_KEY": "n",
    "KAGGLE_KEY": "k",
    "REPLICATE_API_TOKEN": "r8_abc",
    # source hosting and CI
    "GITHUB_PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "GH_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "GITLAB_TOKEN": "glpat-abcdefghijklmnopqrst",
    "NPM_TOKEN": "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "TWINE_PASSWORD": "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NTY3ODk",
    "VAULT_TOKEN": "hvs.abc",
    "MYSECRET": "x",
    "DOCKER_AUTH_CONFIG": '{"auths": {}}',
    # named innocently: only the value gives them away
    "DATABASE": "postgres://etl:pa55@db.internal:5432/prod",
    "UPSTREAM": "https://user:tok@git.example.com/repo.git",
    "EXTRA_HEADER": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
}
KEPT = {
    "PATH": "/usr/local/cuda/bin:/usr/bin",
    "PWD": "/workspace",
    "OLDPWD": "/",
    "HOME": "/root",
    "CUDA_VISIBLE_DEVICES": "0,1",
    "NCCL_IB_HCA": "mlx5_0",
    "NCCL_SOCKET_IFNAME": "eth0",
    "TOKENIZERS_PARALLELISM": "false",
    "KEYBOARD_LAYOUT": "us",
    "GIT_AUTHOR_NAME": "A",
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca.pem",
    "HF_HOME": "/data/hf",
    "PYTHONPATH": "/src",
    "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
}


def test_forty_realistic_credentials_are_redacted_and_innocent_variables_kept():
    assert len(CREDENTIALS) >= 30
    out, names = redact_env({**CREDENTIALS, **KEPT})
    missed = sorted(set(CREDENTIALS) - set(names))
    assert not missed, f"not redacted: {missed}"
    assert all(out[n] == REDACTED for n in CREDENTIALS)
    assert {n: out[n] for n in KEPT} == KEPT  # nothing a parser needs is lost


def test_credential_values_in_free_text_are_redacted_by_rule_id():
    text = (
        "remote: https://oauth2:glpat-abcdefghijklmnopqrst@gitlab.example.com/x.git\n"
        "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' https://api\n"
        "token=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH key AKIAIOSFODNN7EXAMPLE\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "BIOS Information: Basic Input/Output System, disk-by-uuid-1234567890abcdef1234\n"
    )
    counts: dict[str, int] = {}
    out = redact_text(text, counts)
    for secret in (
        "glpat-",
        "oauth2:",
        "abcdefghijklmnopqrstuvwxyz012345",
        "hf_abc",
        "AKIAIOSF",
        "OPENSSH PRIVATE",
    ):
        assert secret not in out
    assert "https://<redacted>@gitlab.example.com/x.git" in out
    assert "Basic Input/Output System, disk-by-uuid-1234567890abcdef1234" in out  # not a credential
    assert set(counts) >= {
        "url-userinfo",
        "http-bearer",
        "huggingface-access-token",
        "aws-access-token",
        "private-key",
    }


def test_mask_replaces_ip_addresses_keeping_subnet_equality():
    m = Masker([], [])
    text = (
        "inet 172.31.5.17/20 brd 172.31.15.255 peer 172.31.5.200 other 172.31.6.4 far 192.168.1.2\n"
        "mask 255.255.240.0 lo 127.0.0.1 any 0.0.0.0 imds 169.254.169.254 version 535.104.05 so.1.2.3.4.5\n"
        "inet6 fe80::e42:a1ff:fe6e:3b10/64 global 2001:db8:1:2::17 2001:db8:1:2::18 2001:db8:1:3::17\n"
        "lo6 ::1 mcast ff02::1 clock 12:34:56 std::vector mac 0c:42:a1:6e:3b:10\n"
    )
    out = m.apply(text)
    for original in ("172.31", "192.168", "e42:a1ff:fe6e:3b10", "2001:db8", "0c:42:a1"):
        assert original not in out
    words = out.split()
    a, same24, other24, far = words[1].split("/")[0], words[5], words[7], words[9]
    assert a.rsplit(".", 1)[0] == same24.rsplit(".", 1)[0]  # same /24 stays the same /24
    assert a.rsplit(".", 1)[0] != other24.rsplit(".", 1)[0] and a.split(".")[:2] == other24.split(".")[:2]
    assert a.split(".")[0] != far.split(".")[0]
    for kept in ("255.255.240.0", "127.0.0.1", "0.0.0.0", "169.254.169.254", "535.104.05", "so.1.2.3.4.5"):
        assert kept in out
    for kept in ("::1", "ff02::1", "12:34:56", "std::vector"):
        assert kept in out
    assert "fe80::" in out  # link-local stays link-local; its MAC-derived interface id is gone
    six = [w for w in words if w.startswith("fd00")]
    assert len(six) == 3 and six[0].rsplit(":", 1)[0] == six[1].rsplit(":", 1)[0] != six[2].rsplit(":", 1)[0]
    assert m.apply(text) == out  # stable
    assert m.counts["ipv4"] == 5 and m.counts["ipv6"] == 4
    versions = (
        '{"cudnn": {"version": "9.1.0.70"}}\nii libnvinfer8 8.6.1.6-1 amd64\nTensorRT version: 8.6.1.6\n'
    )
    assert m.apply(versions) == versions  # version numbers that look like addresses are kept
    assert "10.9.8.7" not in m.apply("nameserver 10.9.8.7\nserver 10.9.8.7 driver 10.9.8.7\n")
