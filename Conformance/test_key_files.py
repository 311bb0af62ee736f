"""Service-account key files as clients load them: fleetd's own files read by the loaders that
Fleet Engine clients use (Namma Yatri's, google-auth's), the URLs they carry, and Google's own
key files registered with `fleetd keys import` and used by Google's client unchanged."""
import json
import os
import subprocess
import time
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt, jwt
from google.maps import fleetengine_v1 as fe
from google.oauth2 import service_account

from conftest import FLEETD, P, PROVIDER, vehicle

# Google's key-file fields: Namma Yatri's loader (shared-kernel, Kernel/Utils/JWT.hs) derives
# its decoder for a record of exactly these, each a non-optional Text (or String), so a file
# missing one, or with a value that is not a string, does not load.
GOOGLE_FIELDS = ["type", "project_id", "private_key_id", "private_key", "client_email", "client_id", "auth_uri",
                 "token_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"]


def namma_yatri_load(info):
    """Namma Yatri's rule, reproduced: all ten fields, each a string."""
    missing = [f for f in GOOGLE_FIELDS if f not in info]
    assert not missing, f"Namma Yatri's loader needs {missing}"
    not_strings = [f for f in GOOGLE_FIELDS if not isinstance(info[f], str)]
    assert not not_strings, f"Namma Yatri's loader needs strings in {not_strings}"
    return {f: info[f] for f in GOOGLE_FIELDS}


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_fleetd_key_files_load_where_google_files_do_and_their_urls_answer(fleetd):
    path = os.path.join(fleetd.data_dir, "server-with-url.json")
    base = f"http://127.0.0.1:{fleetd.http_port}"
    subprocess.run([FLEETD, "keys", "add", "--data-dir", fleetd.data_dir] + fleetd.store +
                   ["--provider", PROVIDER, "--role", "server", "--out", path, "--url", base],
                   check=True, capture_output=True)
    info = json.load(open(path))
    loaded = namma_yatri_load(info)
    assert loaded["type"] == "service_account" and all(loaded[f] for f in GOOGLE_FIELDS)
    # google-auth's loaders take it as they take Google's files.
    credentials = service_account.Credentials.from_service_account_info(info)
    assert credentials.service_account_email == info["client_email"]

    # The URLs lead to fleetd: the account's public keys verify a token signed with the file.
    status, certs = get(info["client_x509_cert_url"])
    assert status == 200 and list(certs) == [info["private_key_id"]]
    token = jwt.encode(crypt.RSASigner.from_service_account_info(info), {
        "iss": info["client_email"], "sub": info["client_email"], "aud": "https://fleetengine.googleapis.com/",
        "iat": int(time.time()), "exp": int(time.time()) + 600})
    claims = jwt.decode(token, certs=certs, audience="https://fleetengine.googleapis.com/")
    assert claims["iss"] == info["client_email"]
    status, every = get(info["auth_provider_x509_cert_url"])
    assert status == 200 and info["private_key_id"] in every
    # No token exchange: OAuth's own error says what to do instead.
    request = urllib.request.Request(info["token_uri"], method="POST", data=b"grant_type=x")
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("the token endpoint answered a grant")
    except urllib.error.HTTPError as error:
        body = json.loads(error.read())
        assert error.code == 400 and body["error"] == "unsupported_grant_type"
        assert "sign a JWT with the key" in body["error_description"]
    assert info["auth_uri"] == info["token_uri"]


def google_key_file(path, project):
    """A key file exactly as Google's console makes one (its fields and formats)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    email = f"fleet-backend@{project}.iam.gserviceaccount.com"
    info = {
        "type": "service_account", "project_id": project, "private_key_id": os.urandom(20).hex(),
        "private_key": pem, "client_email": email, "client_id": "1" + "".join(str(b % 10) for b in os.urandom(20)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/" + email.replace("@", "%40"),
        "universe_domain": "googleapis.com",
    }
    with open(path, "w") as f:
        json.dump(info, f)
    return info


def test_googles_own_key_files_are_imported_and_their_tokens_accepted(fleetd):
    path = os.path.join(fleetd.data_dir, "google-key.json")
    info = google_key_file(path, PROVIDER)
    imported = subprocess.run([FLEETD, "keys", "import", "--data-dir", fleetd.data_dir] + fleetd.store +
                              ["--key", path, "--role", "server"], capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    assert info["private_key_id"] in imported.stdout and PROVIDER in imported.stdout
    signer = crypt.RSASigner.from_service_account_info(info)
    now = int(time.time())
    token = jwt.encode(signer, {"iss": info["client_email"], "sub": info["client_email"],
                                "aud": "https://fleetengine.googleapis.com/", "iat": now, "exp": now + 600}).decode()
    md = [("authorization", "Bearer " + token)]
    created = fleetd.vehicles.create_vehicle(
        request=fe.CreateVehicleRequest(parent=P, vehicle_id="imported", vehicle=vehicle()), metadata=md)
    assert created.name == f"{P}/vehicles/imported"

    # A file whose key cannot be read is refused, the rule named.
    broken = dict(info, private_key="-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    broken_path = os.path.join(fleetd.data_dir, "broken-key.json")
    json.dump(broken, open(broken_path, "w"))
    refused = subprocess.run([FLEETD, "keys", "import", "--data-dir", fleetd.data_dir] + fleetd.store +
                             ["--key", broken_path, "--role", "server"], capture_output=True, text=True)
    assert refused.returncode != 0 and "private_key is not an RSA private key" in refused.stderr
