# SPDX-License-Identifier: Apache-2.0
# gen_dynamodb.py -- regenerates the dynamodb-* SigV4 vectors with botocore,
# an independent implementation, so the C signer is checked against code it
# shares nothing with. Run: python3 gen_dynamodb.py (needs botocore).
import datetime
import os
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

HERE = os.path.dirname(os.path.abspath(__file__))
WHEN = datetime.datetime(2015, 8, 30, 12, 36, 0)
REGION = "eu-west-1"
HOST = "dynamodb.eu-west-1.amazonaws.com"
TOKEN = "FQoGZXIvYXdzEXAMPLE//////////SessionToken+For/Tests=="

CASES = {
    # GetItem with session credentials: the token is signed.
    "dynamodb-getitem": dict(
        target="DynamoDB_20120810.GetItem",
        body='{"TableName":"Orders","Key":{"pk":{"S":"ORDER#1"},"sk":{"S":"ITEM#caf\u00e9"}}}',
        token=TOKEN,
    ),
}

class Recorder(botocore.auth.SigV4Auth):
    """Keeps the canonical request and string to sign of the signing pass
    (recomputing them afterwards would include the Authorization header)."""

    def canonical_request(self, request):
        self.creq = super().canonical_request(request)
        return self.creq

    def string_to_sign(self, request, canonical_request):
        self.sts = super().string_to_sign(request, canonical_request)
        return self.sts


for name, c in CASES.items():
    body = c["body"].encode("utf-8")
    headers = [
        ("Host", HOST),
        ("Content-Type", "application/x-amz-json-1.0"),
        ("X-Amz-Target", c["target"]),
    ]
    req = AWSRequest(method="POST", url="https://%s/" % HOST, data=body,
                     headers=dict(headers))
    creds = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                        c["token"])
    signer = Recorder(creds, "dynamodb", REGION)
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=WHEN):
        signer.add_auth(req)
    ts = req.context["timestamp"]
    creq, sts = signer.creq, signer.sts
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    lines = ["POST / HTTP/1.1"] + ["%s:%s" % h for h in headers]
    text = "\n".join(lines) + "\n\n" + c["body"]
    files = {".req": text, ".creq": creq, ".sts": sts,
             ".authz": req.headers["Authorization"]}
    for ext, t in files.items():
        with open(os.path.join(d, name + ext), "w", encoding="utf-8", newline="") as f:
            f.write(t)
    print(name, ts, req.headers["Authorization"][-16:])
