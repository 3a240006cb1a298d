#!/usr/bin/env python3
"""A tesbo objective plugin written in Python: the Branin function.

tesbo plugins are go-plugin gRPC servers, so any language can serve one.
This file is a complete plugin; it needs Debian's python3-grpcio, either
python3-cryptography or the openssl command (for the certificate of the
mutual TLS go-plugin's AutoMTLS asks for), and the stubs tesbo_pb2.py /
tesbo_pb2_grpc.py generated from sdk/proto.

Use it through the wrapper next to it, which picks a Python that can import
grpc (see README.md):

    ln -s "$PWD/branin-py" plugins/branin-py
    tesbo-host run --objective branin-py --acq random --iters 10

Your own objective elsewhere imports this module and calls
serve(YourObjectiveServicer()); run it through run-py (README.md, "Your
own objective, in another directory").

The protocol, as the host expects it:
  1. the host starts us with TESBO_PLUGIN_MAGIC_COOKIE set, PLUGIN_PROTOCOL_VERSIONS
     listing the versions it speaks, and PLUGIN_CLIENT_CERT (its TLS certificate);
  2. we serve gRPC on 127.0.0.1 with our own self-signed certificate, requiring
     the host's certificate from the client;
  3. we print ONE line on stdout: 1|1|tcp|127.0.0.1:PORT|grpc|BASE64_DER_CERT
     (core protocol 1, tesbo protocol 1) and never write to stdout again;
  4. we serve tesbo.plugin.v1.Plugin and .Objective, plus go-plugin's
     plugin.GRPCController (Shutdown) and grpc.health.v1.Health.
"""

import base64
import concurrent.futures
import datetime
import math
import os
import queue
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import grpc  # noqa: E402

import tesbo_pb2 as pb  # noqa: E402
import tesbo_pb2_grpc as pbg  # noqa: E402

MAGIC_KEY = "TESBO_PLUGIN_MAGIC_COOKIE"
MAGIC_VALUE = "7c1e4f0a-tesbo-plugin-v1"
PROTOCOL_VERSION = "1"


def log(msg):
    """Logs go to stderr; the host re-logs them tagged with our name."""
    print(msg, file=sys.stderr, flush=True)


def branin(x1, x2):
    """Branin on [-5, 10] x [0, 15]; minimum 0.397887 at (-pi, 12.275), (pi, 2.275), (9.42478, 2.475)."""
    a, b, c = 1.0, 5.1 / (4 * math.pi ** 2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x2 - b * x1 ** 2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


class Plugin(pbg.PluginServicer):
    def Describe(self, request, context):
        # One unnamed objective: the host names it after our executable.
        return pb.DescribeResponse(kind=pb.KIND_OBJECTIVE, objectives=[""])


class Objective(pbg.ObjectiveServicer):
    def Info(self, request, context):
        return pb.ObjectiveInfo(
            name="branin (python)",
            params=[
                pb.Param(name="x1", kind=pb.PARAM_KIND_FLOAT, low=-5, high=10),
                pb.Param(name="x2", kind=pb.PARAM_KIND_FLOAT, low=0, high=15),
            ],
            minimize=True,
            optimum=0.397887,
        )

    def Evaluate(self, request, context):
        if len(request.x) != 2:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "want 2 coordinates")
        return pb.EvaluateResponse(value=branin(request.x[0], request.x[1]))


def report_evaluate(request_iterator, context, evaluate):
    """Serves the ReportEvaluate stream for an objective whose evaluation
    reports intermediate values (early stopping; learning_curve.py uses it).

    evaluate(request, report) gets the EvaluateRequest and a function
    report(step, value) that sends the value the evaluation reached at step
    (an epoch, say) to the host and returns True when the host wants the
    evaluation stopped; it returns the EvaluateResponse (a stopped
    evaluation returns its last value). It runs in a thread of its own,
    while this generator relays its reports and the host's answers."""
    try:
        first = next(request_iterator)
    except StopIteration:
        return
    out, answers = queue.Queue(), queue.Queue()

    def report(step, value):
        out.put(pb.ReportFromPlugin(intermediate=pb.IntermediateValue(step=step, value=value)))
        answer = answers.get()
        if answer is None:
            raise RuntimeError("the host closed the evaluation")
        if answer.error:
            raise RuntimeError(answer.error)
        return answer.prune

    def run():
        try:
            out.put(pb.ReportFromPlugin(result=evaluate(first.evaluate, report)))
        except Exception as e:  # noqa: BLE001 (reported to the host)
            out.put(e)

    threading.Thread(target=run, daemon=True).start()
    while True:
        m = out.get()
        if isinstance(m, Exception):
            context.abort(grpc.StatusCode.UNKNOWN, str(m))
        yield m
        if m.HasField("result"):
            return
        try:
            answers.put(next(request_iterator))
        except StopIteration:
            answers.put(None)
            return


def raw_handler(fn, streaming=False):
    """A handler for services we have no stubs for: requests and responses
    are passed as bytes (empty messages are b"")."""
    ident = lambda b: b  # noqa: E731
    if streaming:
        return grpc.unary_stream_rpc_method_handler(fn, request_deserializer=ident, response_serializer=ident)
    return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=ident, response_serializer=ident)


def self_signed():
    """An ECDSA P-256 certificate for localhost, as go-plugin's AutoMTLS
    makes: with python3-cryptography when installed, else with openssl."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return self_signed_openssl()
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tesbo python plugin"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=True,
                                     content_commitment=False, data_encipherment=False, key_agreement=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    der = cert.public_bytes(serialization.Encoding.DER)
    return key_pem, cert_pem, der


def self_signed_openssl():
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        key, crt = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "1", "-subj", "/O=tesbo python plugin/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign",
             "-addext", "extendedKeyUsage=serverAuth,clientAuth",
             "-keyout", key, "-out", crt],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        der = subprocess.run(["openssl", "x509", "-in", crt, "-outform", "DER"],
                             check=True, stdout=subprocess.PIPE).stdout
        with open(key, "rb") as f:
            key_pem = f.read()
        with open(crt, "rb") as f:
            cert_pem = f.read()
    return key_pem, cert_pem, der


def main():
    return serve(Objective())


def serve(objective):
    """Serves objective (an ObjectiveServicer) as a tesbo plugin until the
    host shuts us down; returns the exit status. shifted_branin.py serves
    its own objective with it."""
    if os.environ.get(MAGIC_KEY) != MAGIC_VALUE:
        log("This is a tesbo plugin; run it through tesbo-host (see the docstring).")
        return 1
    versions = os.environ.get("PLUGIN_PROTOCOL_VERSIONS", PROTOCOL_VERSION).split(",")
    if PROTOCOL_VERSION not in versions:
        log("host speaks tesbo protocol %s, this plugin speaks %s" % (versions, PROTOCOL_VERSION))
        return 1

    done = threading.Event()
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=8))
    pbg.add_PluginServicer_to_server(Plugin(), server)
    pbg.add_ObjectiveServicer_to_server(objective, server)

    def shutdown(request, context):
        done.set()
        return b""

    def health(request, context):
        return b"\x08\x01"  # HealthCheckResponse{status: SERVING}

    def stdio(request, context):
        return iter(())  # we never write to stdout/stderr streams

    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler("plugin.GRPCController", {"Shutdown": raw_handler(shutdown)}),
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": raw_handler(health)}),
        grpc.method_handlers_generic_handler("plugin.GRPCStdio", {"StreamStdio": raw_handler(stdio, True)}),
    ))

    client_cert = os.environ.get("PLUGIN_CLIENT_CERT")
    cert_field = ""
    if client_cert:
        key_pem, cert_pem, der = self_signed()
        creds = grpc.ssl_server_credentials([(key_pem, cert_pem)], root_certificates=client_cert.encode(),
                                            require_client_auth=True)
        port = server.add_secure_port("127.0.0.1:0", creds)
        cert_field = base64.b64encode(der).decode().rstrip("=")
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write("1|%s|tcp|127.0.0.1:%d|grpc|%s\n" % (PROTOCOL_VERSION, port, cert_field))
    sys.stdout.flush()
    # The host reads nothing on stdout after the handshake line (go-plugin
    # drains it): send print() and whatever native code writes to fd 1 to
    # stderr, which the host logs.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    log("python objective serving on port %d" % port)
    done.wait()
    server.stop(grace=0.5).wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
