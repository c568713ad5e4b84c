#!/usr/bin/env bash
# Runs Ceph's public S3 conformance suite (github.com/ceph/s3-tests, unmodified) against a fresh
# in-memory `swbucket serve` speaking S3, and prints pytest's summary. Not part of `npm test`: it
# needs a checkout of the suite and its Python packages, from Debian:
#   apt-get install python3-pytest python3-boto3 python3-munch python3-gevent python3-isodate \
#     python3-tz python3-httplib2 python3-lxml python3-pytest-timeout
# Usage: scripts/s3-conformance.sh PATH-TO-S3-TESTS [PORT]   (results in $OUT, default a new temp dir)
#   PYTHONPATH=...  a directory with a newer boto3, botocore and s3transfer: Debian's botocore 1.29
#               predates the parameters of conditional writes (7 tests) and MaxBuckets (1 test)
#   SELECT=...  a pytest -k expression that narrows the run (e.g. SELECT=if_match)
#
# Deselected: what the service does not have (docs/protocol.md, "Dialects", "What S3 has and this
# service does not") — IAM, STS and policies, encryption, lifecycle, logging, notifications,
# tagging, object lock, select, website, storage classes, delete markers, conditional deletes (directory buckets only),
# ownership controls, public access blocks, torrents, tenants, CRC64-NVME — and what the suite
# itself marks as failing on AWS or on Ceph's RGW.
set -euo pipefail
SUITE=$(cd "${1:?usage: scripts/s3-conformance.sh PATH-TO-S3-TESTS [PORT]}" && pwd)
PORT=${2:-8111}
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

node --import tsx node/cli.ts serve --port "$PORT" --dialect s3 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$OUT/server.log" 2>/dev/null && break; sleep 0.2; done

# The suite's second and third users, as swbucket accounts (made through its own dialect, as root).
cat > "$OUT/accounts.mts" <<TS
import { createClient } from '$PWD/src/client/index.ts';
const root = createClient({ endpoint: 'http://127.0.0.1:$PORT', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
await root.putAccount('s3testalt', { secretAccessKey: 's3testalt-secret-key', displayName: 'john.doe' });
await root.putAccount('s3testtenant', { secretAccessKey: 's3testtenant-secret-key', displayName: 'tenanteduser' });
TS
node --import tsx "$OUT/accounts.mts"

cat > "$OUT/s3tests.conf" <<CONF
[DEFAULT]
host = 127.0.0.1
port = $PORT
is_secure = False
ssl_verify = False
[fixtures]
bucket prefix = s3t-{random}-
[s3 main]
display_name = svcadmin
user_id = svcadmin
email = svcadmin@example.com
api_name =
access_key = svcadmin
secret_key = svcadmin-secret
[s3 alt]
display_name = john.doe
user_id = s3testalt
email = john.doe@example.com
access_key = s3testalt
secret_key = s3testalt-secret-key
[s3 tenant]
display_name = tenanteduser
user_id = s3testtenant
email = tenanteduser@example.com
access_key = s3testtenant
secret_key = s3testtenant-secret-key
tenant = testx
[iam]
email = s3@example.com
user_id = iamuser
access_key = IAMNOTCONFIGURED0001
secret_key = iam-not-configured-secret
display_name = iam
[iam root]
access_key = IAMROOTNOTCONFIGURED
secret_key = iamroot-not-configured
user_id = RGW11111111111111111
email = account1@ceph.com
[iam alt root]
access_key = IAMALTROOTNOTCONFIG1
secret_key = iamaltroot-not-configured
user_id = RGW22222222222222222
email = account2@ceph.com
CONF

MARKERS='not fails_on_aws and not fails_on_rgw and not bucket_logging and not bucket_logging_cleanup and not fails_without_logging_rollover and not encryption and not sse_s3 and not bucket_encryption and not lifecycle and not lifecycle_expiration and not lifecycle_transition and not cloud_transition and not cloud_restore and not target_by_bucket and not tagging and not bucket_policy and not object_ownership and not delete_marker and not storage_class and not iam_user and not iam_account and not iam_tenant and not iam_role and not object_lock and not s3select and not s3website and not sns and not test_of_sts and not appendobject and not abac_test and not user_policy and not role_policy and not session_policy and not group_policy and not webidentity_test'
NAMES='not object_lock and not policy and not public_block and not block_public and not ignore_public_acls and not torrent and not crc64nvme and not tenant'
cd "$SUITE"
S3TEST_CONF="$OUT/s3tests.conf" BOTO_DISABLE_CRT=true /usr/bin/python3 -m pytest s3tests/functional/test_s3.py \
  -m "$MARKERS" -k "$NAMES${SELECT:+ and ($SELECT)}" --timeout=120 -p no:cacheprovider -rfE --tb=short --junitxml="$OUT/results.xml" > "$OUT/pytest.out" 2>&1 || true
tail -1 "$OUT/pytest.out"
echo "details: $OUT/pytest.out, $OUT/results.xml; the server's log: $OUT/server.log"
