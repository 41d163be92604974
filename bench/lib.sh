# Shared by the bench scripts (sourced, not run).

# field NAME: the number NAME holds in the JSON line on stdin (loadgen -json).
field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }

# answering PORT ZONE [TRIES]: wait until the server on 127.0.0.1:PORT
# answers ZONE's SOA, TRIES times 0.1 s at most (default 100); false if not.
answering() {
	for _ in $(seq "${3:-100}"); do
		dig +short +time=1 +tries=1 @127.0.0.1 -p "$1" "$2" SOA >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# cpu_ticks PID: the user and system time of a process and of all its
# descendants (NSD serves from a grandchild), in clock ticks (getconf
# CLK_TCK a second), as "USER SYSTEM". Time the hypervisor took from the
# machine is not in it. A process's name may hold spaces ("nsd: server 1"):
# the fields are counted after its closing parenthesis. A process gone
# before it is read counts 0.
cpu_ticks() {
	local u s p cu cs
	read -r u s < <(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12, $13}') || true
	u=${u:-0} s=${s:-0}
	for p in $(pgrep -P "$1"); do
		read -r cu cs < <(cpu_ticks "$p")
		u=$((u + cu)) s=$((s + cs))
	done
	echo "$u $s"
}

# cpu_total PID: cpu_ticks's user and system time together.
cpu_total() {
	local u s
	read -r u s < <(cpu_ticks "$1")
	echo $((u + s))
}

# knot_conf DIR PORT ZONE WORKERS: Knot DNS's configuration, DIR/knot.conf,
# to serve the zone file ZONE (bench.example) on 127.0.0.1:PORT with WORKERS
# UDP workers, one TCP and one background worker; DIR is its run and
# storage directory. DIR and ZONE are relative to the repository's root.
knot_conf() {
	cat > "$1/knot.conf" <<EOC
server:
    listen: 127.0.0.1@$2
    rundir: $PWD/$1
    udp-workers: $4
    tcp-workers: 1
    background-workers: 1
$( [ "$(id -u)" = 0 ] && echo "    user: root:root" )
database:
    storage: $PWD/$1
log:
  - target: stderr
    any: error
zone:
  - domain: bench.example
    file: $PWD/$3
    zonefile-sync: -1
    journal-content: none
EOC
}

# nsd_conf DIR PORT ZONE SERVERS: NSD's configuration, DIR/nsd.conf, the
# same way, with SERVERS server processes. NSD logs to DIR/log.
nsd_conf() {
	cat > "$1/nsd.conf" <<EOC
server:
    ip-address: 127.0.0.1
    port: $2
    server-count: $4
    username: ""
    chroot: ""
    zonesdir: "$PWD/$1"
    database: ""
    zonelistfile: "$PWD/$1/zone.list"
    pidfile: "$PWD/$1/nsd.pid"
    xfrdfile: "$PWD/$1/xfrd.state"
    xfrdir: "$PWD/$1"
    logfile: "$PWD/$1/log"
    verbosity: 0
    rrl-ratelimit: 0 # Debian builds NSD with response rate limiting on (200/s a /24): off, as for the others
remote-control:
    control-enable: no
zone:
    name: bench.example
    zonefile: "$PWD/$3"
EOC
}

# catalog_primary OUT PORT [NOTIFY_PORT]: Knot DNS's configuration,
# OUT/primary.conf, as the primary of every zone of OUT/zones.knot.conf
# (bench/genzones) and of catalog.invalid, a catalog zone (RFC 9432)
# naming them all, written to OUT/primary; listening on 127.0.0.1:PORT,
# transfers allowed from 127.0.0.1, and, with NOTIFY_PORT, every zone
# notifying 127.0.0.1:NOTIFY_PORT. Started by the caller.
catalog_primary() {
	local out=$1 port=$2 notify=${3:-} user=
	[ "$(id -u)" = 0 ] && user="    user: root:root"
	rm -rf "$out/primary"; mkdir -p "$out/primary"
	{ printf '$ORIGIN catalog.invalid.\n$TTL 0\n@ SOA invalid. invalid. 1 3600 600 2419200 0\n@ NS invalid.\nversion TXT "2"\n'
	  awk '/domain:/ { printf "m%d.zones PTR %s.\n", n++, $3 }' "$out/zones.knot.conf"; } > "$out/primary/catalog.invalid.zone"
	{ printf "server:\n    listen: 127.0.0.1@$port\n    rundir: $PWD/$out/primary\n$user\n"
	  printf "log:\n  - target: stderr\n    any: warning\n"
	  printf "database:\n    storage: $PWD/$out/primary\n"
	  [ -n "$notify" ] && printf "remote:\n  - id: notified\n    address: 127.0.0.1@$notify\n"
	  printf "acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n"
	  printf "template:\n  - id: default\n    zonefile-sync: -1\n    zonefile-load: whole\n    journal-content: none\n    acl: xfr\n"
	  [ -n "$notify" ] && printf "    notify: notified\n"
	  cat "$out/zones.knot.conf"
	  printf "  - domain: catalog.invalid\n    file: $PWD/$out/primary/catalog.invalid.zone\n"; } > "$out/primary.conf"
}

# zone_sample OUT ZONES: OUT/sample.txt, 201 names of bench/genzones'
# ZONES zones (200 at random, and the last zone's), each answering with an
# address once its zone is served (sample_served).
zone_sample() {
	awk -v n="$2" 'BEGIN { srand(3); for (i = 0; i < 200; i++) printf "www.z%d.test.\n", int(rand() * n); printf "www.z%d.test.\n", n - 1 }' > "$1/sample.txt"
}

# many_zones OUT ZONES: bench/genzones' ZONES zones in OUT/zones, with
# their Knot zone list OUT/zones.knot.conf, written again only where OUT
# holds another count of them; and their zone_sample.
many_zones() {
	if [ ! -s "$1/zones.knot.conf" ] || [ "$(grep -c 'domain:' "$1/zones.knot.conf")" != "$2" ]; then
		go run ./bench/genzones -zones "$2" -dir "$1/zones" -knot "$1/zones.knot.conf" -queries "$1/queries.txt" -count 1000
	fi
	zone_sample "$1" "$2"
}

# sample_served PORT OUT: whether the server on 127.0.0.1:PORT answers
# every name of OUT/sample.txt with an address.
sample_served() {
	local n
	n=$(dig +time=1 +tries=1 +short @127.0.0.1 -p "$1" -f "$2/sample.txt" A 2>/dev/null | grep -c '^10\.' || true)
	[ "$n" -ge 201 ]
}

# answered PORT DIG_ARGS...: whether the server on 127.0.0.1:PORT answers
# the question in DIG_ARGS with a record. dig +short writes its report of
# an error (";; communications error ...") to the same output as the
# records: a check that read any output as an answer passed where the
# server did not answer at all.
answered() {
	local port=$1
	shift
	dig +time=1 +tries=1 +short @127.0.0.1 -p "$port" "$@" 2>/dev/null | grep -v '^;' | grep -q .
}

# last_zone_served PORT OUT: whether the server on 127.0.0.1:PORT answers
# the SOA of the last zone of OUT/zones.knot.conf over TCP. Knot 3.2 takes
# no TCP connection until it has loaded every zone: with 1,000,000 zones,
# 5.5 minutes after it started, when its memory stopped growing
# (2026-12-07 22:31). Until then this asked over UDP, and took dig's
# report of an error for an answer (answered): a primary not yet
# listening, or too busy loading to answer within 1 s, passed, and a
# secondary started then counted the primary's load in its own load time.
last_zone_served() {
	answered "$1" +tcp "$(awk '/domain:/ { d = $3 } END { print d }' "$2/zones.knot.conf")" SOA
}
