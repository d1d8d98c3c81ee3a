# Shared by tests/e2e/run_tls.sh and tests/e2e/tls_nginx.sh (sourced after run_common.bash,
# in $TMP): the throwaway CA and server certificates, and nginx (nginx-light: ssl and http_v2)
# with one worker on loopback.
command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
command -v nginx >/dev/null && command -v openssl >/dev/null || { echo "skip: nginx or openssl missing"; exit 77; }

# nginx_tls_sign NAME SAN [STARTDATE ENDDATE]: NAME.pem / NAME.key signed by the CA
nginx_tls_sign() {
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=${2#*:}" \
        -addext "subjectAltName=$2" 2>/dev/null
    mkdir -p ca.db && : >ca.db/index.txt && echo 1000 >ca.db/serial
    cat >ca.db/ca.cnf <<CNF
[ ca ]
default_ca = test
[ test ]
dir = $TMP/ca.db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
default_days = 2
[ any ]
commonName = supplied
CNF
    openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -in "$1.csr" -out "$1.pem" \
        ${3:+-startdate $3 -enddate $4} >/dev/null 2>&1 || fail "openssl ca for $1"
}

# nginx_tls_certs: ca.pem/ca.key (a CA for 2 days) and, signed by it, good.pem/.key (localhost
# and 127.0.0.1), expired.pem/.key (the same names, valid only on 2020-01-01) and
# wrong.pem/.key (wrong.example).
nginx_tls_certs() {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=knee-test-ca 2>/dev/null
    nginx_tls_sign good "DNS:localhost,IP:127.0.0.1"
    nginx_tls_sign expired "DNS:localhost,IP:127.0.0.1" 20200101000000Z 20200102000000Z
    nginx_tls_sign wrong "DNS:wrong.example"
}

# nginx_tls_start WAIT_PORT: nginx/nginx.conf from the common part (one worker, no access log,
# temporary paths in $TMP/nginx, TLS 1.2 and 1.3 with good.pem) and the http-level lines read
# from stdin (its servers and any directive of the test's own), started in the background
# (PIDS), waited for until 127.0.0.1:WAIT_PORT accepts a connection.
nginx_tls_start() {
    local wait_port=$1
    mkdir -p nginx
    {
        cat <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx;
  proxy_temp_path $TMP/nginx;
  fastcgi_temp_path $TMP/nginx;
  uwsgi_temp_path $TMP/nginx;
  scgi_temp_path $TMP/nginx;
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $TMP/good.pem;
  ssl_certificate_key $TMP/good.key;
CONF
        cat
        echo "}"
    } >nginx/nginx.conf
    nginx -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" >nginx/out 2>&1 &
    PIDS+=($!)
    for i in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $wait_port), 0.2)" 2>/dev/null && break
        sleep 0.1
    done
}
