#!/usr/bin/env python3
# tests/unit/sigv4_vectors.py: prints the expected Authorization headers of test_sigv4.c,
# computed by botocore (Debian python3-botocore or PyPI botocore), independently of our signer.
import datetime, hashlib
from unittest import mock
import botocore.auth, botocore.awsrequest, botocore.credentials

def sign(method, url, headers, body, region, token=None, service="s3"):
    creds = botocore.credentials.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    req = botocore.awsrequest.AWSRequest(method=method, url=url, headers=headers, data=body)
    cls = botocore.auth.S3SigV4Auth if service == "s3" else botocore.auth.SigV4Auth
    auth = cls(creds, service, region)
    with mock.patch("botocore.auth.get_current_datetime", return_value=datetime.datetime(2026, 11, 30, 12, 34, 56)):
        auth.add_auth(req)
    print(method, url)
    print("  ", req.headers["Authorization"])

e = hashlib.sha256(b"").hexdigest()
sign("GET", "http://127.0.0.1:9000/bucket?continuation-token=1%2Fab%2B%3D&encoding-type=url&list-type=2&prefix=t%20x%2Fdata%2F",
     {"x-amz-content-sha256": e}, b"", "us-east-1")
body = b"hello, world"
sign("PUT", "https://bkt.s3.eu-west-1.amazonaws.com/a%20b/%2B%2F/./../x%C3%A9.json",
     {"x-amz-content-sha256": hashlib.sha256(body).hexdigest(), "If-None-Match": "*"}, body, "eu-west-1", token="FQoGZXIvYXdzEXAMPLETOKEN")
dbody = b'<Delete><Quiet>true</Quiet><Object><Key>k</Key></Object></Delete>'
import base64
sign("POST", "http://localhost:4566/b?delete=",
     {"x-amz-content-sha256": hashlib.sha256(dbody).hexdigest(), "Content-MD5": base64.b64encode(hashlib.md5(dbody).digest()).decode(), "Content-Type": "application/xml"}, dbody, "us-west-2")
