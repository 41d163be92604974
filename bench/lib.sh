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

# cpu_ticks PID: the user and system time of a process and of its children
# (NSD serves from a child process), in clock ticks (getconf CLK_TCK a
# second). Time the hypervisor took from the machine is not in it.
cpu_ticks() {
	local t=0 p
	for p in "$1" $(pgrep -P "$1"); do
		[ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
