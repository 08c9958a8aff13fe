"""Self-generated PKI for the lab: a CA, an apiserver serving cert, a service-account key pair."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

_VALIDITY = dt.timedelta(days=30)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


EKS_METRICS_SERVICE = ("kube-system", "eks-metrics")
"""The Service (namespace, name) of the lab's aggregated EKS metrics API."""
EXTENSION_SERVICE_DNS = f"{EKS_METRICS_SERVICE[1]}.{EKS_METRICS_SERVICE[0]}.svc"
"""The name the apiservers check an aggregated API backend's certificate for: its
Service's."""


def write_pki(pki_dir: Path, hosts: tuple[str, ...] = ()) -> dict[str, Path]:
    """Create ca.crt/ca.key, apiserver.crt/.key (127.0.0.1, localhost, the service IP and
    the control-plane ``hosts``), front-proxy-client.crt/.key, extension.crt/.key (an
    aggregated API's backend) and sa.key/sa.pub under
    `pki_dir`; return their paths by short name.
    """
    pki_dir.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("ktop-lab-ca"))
        .issuer_name(_name("ktop-lab-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(
        cn: str, sans: list[x509.GeneralName], usage: x509.ObjectIdentifier
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(ca_key, hashes.SHA256()), key

    server, client = (
        x509.oid.ExtendedKeyUsageOID.SERVER_AUTH,
        x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    host_ips = [x509.IPAddress(ipaddress.ip_address(h)) for h in hosts]
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default"),
        x509.DNSName("kubernetes.default.svc"),
        x509.DNSName("kubernetes.default.svc.cluster.local"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("10.96.0.1")),
        *host_ips,
    ]
    srv_cert, srv_key = leaf("kube-apiserver", sans, server)
    # an aggregated API's backend, as the apiservers dial it: by its Service's name
    ext_sans: list[x509.GeneralName] = [x509.DNSName(EXTENSION_SERVICE_DNS), *host_ips]
    ext_cert, ext_key = leaf(EXTENSION_SERVICE_DNS, ext_sans, server)
    # the apiservers' identity towards aggregated APIs (--proxy-client-cert-file), which
    # their --requestheader-allowed-names accepts
    proxy_cert, proxy_key = leaf("front-proxy-client", [], client)

    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    paths = {
        "ca_crt": pki_dir / "ca.crt",
        "ca_key": pki_dir / "ca.key",
        "apiserver_crt": pki_dir / "apiserver.crt",
        "apiserver_key": pki_dir / "apiserver.key",
        "sa_key": pki_dir / "sa.key",
        "sa_pub": pki_dir / "sa.pub",
        "front_proxy_crt": pki_dir / "front-proxy-client.crt",
        "front_proxy_key": pki_dir / "front-proxy-client.key",
        "extension_crt": pki_dir / "extension.crt",
        "extension_key": pki_dir / "extension.key",
    }
    _write_cert(paths["extension_crt"], ext_cert)
    _write_key(paths["extension_key"], ext_key)
    _write_cert(paths["front_proxy_crt"], proxy_cert)
    _write_key(paths["front_proxy_key"], proxy_key)
    _write_cert(paths["ca_crt"], ca_cert)
    _write_key(paths["ca_key"], ca_key)
    _write_cert(paths["apiserver_crt"], srv_cert)
    _write_key(paths["apiserver_key"], srv_key)
    _write_key(paths["sa_key"], sa_key)
    paths["sa_pub"].write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return paths
