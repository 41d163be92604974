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
