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
