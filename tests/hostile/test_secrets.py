"""Secrets never reach a capture (issue 28.3): 60+ realistic credential forms across clouds, chat and
CI tools go through the real `gpuwise capture`, with and without --mask, and none of their secret
parts appears in `commands/env.txt` or any other captured file; ordinary variables are kept.

All values are made up in the shape each vendor documents (lengths and prefixes), none is real.
"""

from __future__ import annotations

import json

import pytest

from gpuwise.errors import EXIT_OK

# (variable, value, the part of the value that must not appear anywhere in the capture)
FORMS: list[tuple[str, str, str]] = [
    # Tencent Cloud
    (
        "TENCENTCLOUD_SECRET_ID",
        "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE",
        "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE",
    ),
    ("TENCENTCLOUD_SECRET_KEY", "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE", "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE"),
    ("QCLOUD_SK", "qcloudSecretKeyValue0123456789ab", "qcloudSecretKeyValue0123456789ab"),
    ("QCLOUD_AK", "AKIDqcloudakvalue0123456789", "AKIDqcloudakvalue0123456789"),
    ("COS_SECRETKEY", "cosSecretKey9f8e7d6c5b4a", "cosSecretKey9f8e7d6c5b4a"),
    ("TKE_CLUSTER_TOKEN", "tkeclustertoken-4a5b6c7d8e", "tkeclustertoken-4a5b6c7d8e"),
    # Alibaba Cloud
    ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI5tAbCdEfGhIjKlMnOpQr", "LTAI5tAbCdEfGhIjKlMnOpQr"),
    ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "aliyunSecretValue0123456789abcd", "aliyunSecretValue0123456789abcd"),
    ("ALICLOUD_SECRET_KEY", "alicloudsecret-zyxwvu98765", "alicloudsecret-zyxwvu98765"),
    ("OSS_ACCESS_KEY_SECRET", "ossaccesssecret-1q2w3e4r5t", "ossaccesssecret-1q2w3e4r5t"),
    ("ALIYUN_STS_TOKEN", "CAIS8gF1q6Ft5B2yfSjIr5bSsts0token", "CAIS8gF1q6Ft5B2yfSjIr5bSsts0token"),
    # Huawei Cloud
    ("HUAWEICLOUD_SDK_AK", "HPUAXYZ1234567890ABC", "HPUAXYZ1234567890ABC"),
    (
        "HUAWEICLOUD_SDK_SK",
        "huaweiSkValue0123456789abcdefghijABCDEFGH",
        "huaweiSkValue0123456789abcdefghijABCDEFGH",
    ),
    ("OBS_SECRET_ACCESS_KEY", "obssecretaccesskey-7y6t5r", "obssecretaccesskey-7y6t5r"),
    ("HW_SECURITY_TOKEN", "hwsecuritytoken-gAAAAABk", "hwsecuritytoken-gAAAAABk"),
    # Baidu AI Cloud
    ("BCE_ACCESS_KEY_ID", "baiduakid0123456789abcdef01", "baiduakid0123456789abcdef01"),
    ("BCE_SECRET_ACCESS_KEY", "baidusecret0123456789abcdef01", "baidusecret0123456789abcdef01"),
    ("QIANFAN_SK", "qianfanSecretKeyAbCdEf012345", "qianfanSecretKeyAbCdEf012345"),
    ("BAIDU_AK", "baiduApiKey-xyz987654321", "baiduApiKey-xyz987654321"),
    # Volcano Engine
    ("VOLC_ACCESSKEY", "AKLTYmQ4YzE2MGYwZGQ5NGE3ZmI5", "AKLTYmQ4YzE2MGYwZGQ5NGE3ZmI5"),
    ("VOLC_SECRETKEY", "volcSecretKeyTWpVNE5XRTBaV1Ex", "volcSecretKeyTWpVNE5XRTBaV1Ex"),
    ("VOLCENGINE_SK", "volcengineSkValue0987654321", "volcengineSkValue0987654321"),
    ("ARK_API_KEY", "arkApiKey-5d1c2b3a-volcano", "arkApiKey-5d1c2b3a-volcano"),
    # AWS
    ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjEXAMPLEsessiontoken", "IQoJb3JpZ2luX2VjEXAMPLEsessiontoken"),
    (
        "ARTIFACT_URL",
        "https://b.s3.amazonaws.com/m.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
        "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
    ),
    ("S3_BACKUP", "ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
    # Google Cloud
    (
        "GOOGLE_OAUTH_ACCESS_TOKEN",
        "ya29.a0AfH6SMBexampleexampleexample0123",
        "ya29.a0AfH6SMBexampleexampleexample0123",
    ),
    ("GCLOUD_AUTH", "ya29.c.b0AXv0zTPexampleToken-0987654321", "ya29.c.b0AXv0zTPexampleToken-0987654321"),
    ("MAPS_CONFIG", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
    (
        "GCS_SIGNED",
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=7a3b9c1d2e4f5a6b7c8d9e0f",
        "7a3b9c1d2e4f5a6b7c8d9e0f",
    ),
    ("GCP_SA_PRIVATE_KEY_ID", "d41d8cd98f00b204e9800998ecf8427e", "d41d8cd98f00b204e9800998ecf8427e"),
    # Azure
    (
        "BLOB_URL",
        "https://acct.blob.core.windows.net/c/ckpt.pt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31&sig=k3yD%2BV0ExampleSignature%3D",
        "k3yD%2BV0ExampleSignature%3D",
    ),
    (
        "AZURE_STORAGE_CONNECTION_STRING",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==;EndpointSuffix=core.windows.net",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==",
    ),
    ("AZURE_CLIENT_SECRET", "azClientSecret~8Q~exampleexample", "azClientSecret~8Q~exampleexample"),
    (
        "SERVICEBUS",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=sbKeyExample0123456789=",
        "sbKeyExample0123456789=",
    ),
    ("ARM_ACCESS_KEY", "armAccessKeyExampleValue==", "armAccessKeyExampleValue=="),
    # chat tools and their webhooks
    (
        "NOTIFY_URL",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    (
        "SLACK_BOT_TOKEN",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    ),
    (
        "CHAT_APP",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
    ),
    (
        "DINGTALK_HOOK",
        "https://oapi.dingtalk.com/robot/send?access_token=1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
        "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    ),
    (
        "FEISHU_BOT",
        "https://open.feishu.cn/open-apis/bot/v2/hook/8f3c2a1b-4d5e-6f70-8192-a3b4c5d6e7f8",
        "8f3c2a1b-4d5e-6f70-8192-a3b4c5d6e7f8",
    ),
    (
        "LARK_ALERTS",
        "https://open.larksuite.com/open-apis/bot/v2/hook/0a1b2c3d-ffff-4444-8888-123456789abc",
        "0a1b2c3d-ffff-4444-8888-123456789abc",
    ),
    (
        "WECOM_ROBOT",
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa",
        "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa",
    ),
    (
        "DISCORD_CHANNEL",
        "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789",
        "AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789",
    ),
    (
        "TEAMS_CHANNEL",
        "https://contoso.webhook.office.com/webhookb2/7a1b2c3d-1111@2222/IncomingWebhook/abcdef0123/9999",
        "IncomingWebhook/abcdef0123",
    ),
    (
        "TELEGRAM_BOT_TOKEN",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    # CI, source hosting, registries
    ("GITHUB_TOKEN", "ghs_16C7e42F292c6912E7710c838347Ae178B4a", "ghs_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("GH_ENTERPRISE", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("CI_JOB_TOKEN", "glcbt-64_abcdefghijklmnopqrst", "glcbt-64_abcdefghijklmnopqrst"),
    ("RUNNER_REG", "glrt-t1_abcdefghijklmnopqrstuv", "glrt-t1_abcdefghijklmnopqrstuv"),
    (
        "ACTIONS_ID",
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJyZXBvOm9yZy9yZXBvIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
        "c2lnbmF0dXJlLXNpZ25hdHVyZQ",
    ),
    (
        "DOCKER_PASSWORD",
        "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c",
        "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c",
    ),
    ("CR_PAT", "ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_1234567890abcdefghijABCDEFGHIJ123456"),
    ("JENKINS_API_TOKEN", "11e8a0cbd0e1f2a3b4c5d6e7f8a9b0c1d2", "11e8a0cbd0e1f2a3b4c5d6e7f8a9b0c1d2"),
    ("CODECOV_UPLOAD", "token 8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d", "8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d"),
    ("BUILDKITE_AGENT_TOKEN", "bkagent-3f2e1d0c9b8a7f6e5d4c", "bkagent-3f2e1d0c9b8a7f6e5d4c"),
    # shells, databases, ML services
    ("SSHPASS", "hunter2-ssh-pass", "hunter2-ssh-pass"),
    ("ANSIBLE_BECOME_PASS", "becomeP4ss!", "becomeP4ss!"),
    ("REDIS_URI", "rediss://default:redisPw0rd123@cache.internal:6380/0", "redisPw0rd123"),
    ("WANDB_API_KEY", "0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
    (
        "OPENAI_KEY_PROD",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    ),
    ("STRIPE", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    (
        "MAILER",
        "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",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    ),
    (
        "DEPLOY_KEY_MATERIAL",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    ),
    ("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("MLFLOW_TRACKING_PASSWORD", "mlflowPw-7788", "mlflowPw-7788"),
]

# What a parser needs from the environment, and names that only look like credentials.
KEPT = {
    "CUDA_VISIBLE_DEVICES": "0,1,2,3",
    "NCCL_IB_HCA": "mlx5_0,mlx5_1",
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_DEBUG": "INFO",
    "NCCL_P2P_DISABLE": "0",
    "LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu",
    "HOSTNAME": "gpu-node-17",
    "TOKENIZERS_PARALLELISM": "false",
    "KEYBOARD_LAYOUT": "us",
    "PCI_PASSTHROUGH": "vfio",
    "GIT_AUTHOR_NAME": "A",
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "HF_HOME": "/data/hf",
    "OMP_NUM_THREADS": "8",
}


def test_there_are_at_least_sixty_forms_across_vendors():
    assert len(FORMS) >= 60 and len({name for name, _v, _s in FORMS}) == len(FORMS)


@pytest.mark.parametrize("mask", [False, True], ids=["plain", "mask"])
def test_no_secret_form_reaches_any_captured_file(sandbox, mask):
    env = sandbox.env(**{name: value for name, value, _secret in FORMS}, **KEPT)
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    out_dir = sandbox.root / "cap"
    sandbox.run("capture", "-o", str(out_dir), *(["--mask"] if mask else []), env=env).check(EXIT_OK)
    leaks = []
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        leaks += [f"{name} in {path.relative_to(out_dir)}" for name, _v, secret in FORMS if secret in text]
    assert not leaks, leaks
    captured = json.loads((out_dir / "commands/env.txt").read_text())
    assert set(captured["redacted"]) >= {name for name, _v, _s in FORMS}
    kept = {k: v for k, v in KEPT.items() if k != "HOSTNAME" or not mask}  # --mask replaces host names
    assert {k: captured["env"].get(k) for k in kept} == kept  # no over-redaction
    assert captured["env"]["PATH"] == env["PATH"]


def test_secret_forms_in_free_text_are_redacted_and_ordinary_lines_kept():
    """The same forms as `env` lines, shell exports, docker's "Env" list and JSON, through redact_text
    (what every captured file and command output goes through)."""
    from gpuwise.capture.redact import redact_text

    kept_lines = [f"{k}={v}" for k, v in KEPT.items()]
    texts = {
        "env": "\n".join([f"{n}={v}" for n, v, _s in FORMS if "\n" not in v] + kept_lines),
        "export": "\n".join(f'export {n}="{v}"' for n, v, _s in FORMS if "\n" not in v),
        "docker": json.dumps({"Env": [f"{n}={v}" for n, v, _s in FORMS]}),
        "json": json.dumps({n: v for n, v, _s in FORMS}),
    }
    for kind, text in texts.items():
        out = redact_text(text)
        leaked = [n for n, v, secret in FORMS if v in text and secret in out]
        assert not leaked, (kind, leaked)
    out = redact_text(texts["env"])
    assert all(line in out.splitlines() for line in kept_lines)
    assert redact_text('{"key": "avx512f", "name": "x"}') == '{"key": "avx512f", "name": "x"}'


def test_redacting_a_large_innocent_output_is_fast():
    """A 16 MiB member (the capture's per-file cap) of `NAME=value` lines: a few seconds at most.
    CPU time, not wall time: 0.86 s of CPU took 3.5-4.0 s of wall time here while other test runs shared
    the two cores; a pattern that backtracks badly would take minutes of CPU."""
    import time

    from gpuwise.capture.redact import redact_text

    text = "".join(f"VAR_{i}=value{i}\n" for i in range(800_000))  # ~16 MB
    start = time.process_time()
    assert redact_text(text) == text
    assert time.process_time() - start < 10


def test_text_whose_lower_case_is_longer_is_redacted_in_place():
    """'İ'.lower() is two characters: line offsets found in a lowered copy must still fit the text."""
    from gpuwise.capture.redact import redact_text

    text = "İ" * 50 + " boot\nİstanbul MY_TOKEN=abc123\nnext line with key words\nA=1\n"
    assert redact_text(text) == text.replace("abc123", "<redacted>")
