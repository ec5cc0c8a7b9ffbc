"""Sends Spark Connect ExecutePlan requests through gRPC's C core, the transport PySpark uses.

Run by GrpcCoreClientIT, which builds the requests (serialized ExecutePlanRequest messages, one file each) and
reads back what came out: every response message, or the status, details and trailers of a failed call.
Messages pass as raw bytes, so no generated protobuf code is needed here.

    python3 grpc_core_client.py job.json
    job.json: {"target": "localhost:PORT", "ca": "ca.pem", "token": "..." or null,
               "requests": ["r1.bin", ...], "out": "result.json"}
"""
import base64
import json
import sys

import grpc

EXECUTE_PLAN = "/spark.connect.SparkConnectService/ExecutePlan"


def b64(data):
    return base64.b64encode(data).decode("ascii")


def run(channel, request, token):
    metadata = [("authorization", "Bearer " + token)] if token else []
    call = channel.unary_stream(EXECUTE_PLAN)  # no serializers: bytes in, bytes out
    result = {"code": "OK", "responses": []}
    try:
        for response in call(request, metadata=metadata, timeout=120):
            result["responses"].append(b64(response))
    except grpc.RpcError as e:
        result["code"] = e.code().name
        result["details"] = e.details()
        result["trailers"] = {key: b64(value) if key.endswith("-bin") else value
                              for key, value in (e.trailing_metadata() or ())}
    return result


def main(job_file):
    with open(job_file) as f:
        job = json.load(f)
    with open(job["ca"], "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    results = []
    with grpc.secure_channel(job["target"], credentials) as channel:
        for path in job["requests"]:
            with open(path, "rb") as f:
                results.append(run(channel, f.read(), job.get("token")))
    with open(job["out"], "w") as f:
        json.dump({"grpc_version": grpc.__version__, "results": results}, f)


if __name__ == "__main__":
    main(sys.argv[1])
