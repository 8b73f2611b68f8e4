#!/bin/sh
# tests/slurm/cluster.sh: a throwaway one-node Slurm cluster for the tiles
# test.  Needs root (slurmd starts jobs as their user).
#
#   cluster.sh start DIR [PID]  config, munge key, munged, slurmctld and
#                               slurmd, all under DIR; returns once the node
#                               is idle.  Clients then need SLURM_CONF=DIR/slurm.conf.
#                               With PID: the cluster stops when PID ends
#                               (the test runner killed mid-test).
#   cluster.sh stop DIR         cancel the jobs, stop the daemons, keep DIR.
here=$(cd "$(dirname "$0")" && pwd)

cluster_stop() {
    dir=$1
    [ -f "$dir/pids" ] || return 0
    SLURM_CONF=$dir/slurm.conf
    export SLURM_CONF
    # Jobs first, while slurmd can still kill their processes.
    if timeout 10 scancel --quiet --user=root 2>/dev/null; then
        i=0
        while [ $i -lt 20 ] && [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]; do
            sleep 0.5; i=$((i + 1))
        done
    fi
    for p in $(tac "$dir/pids"); do kill "$p" 2>/dev/null; done
    i=0
    for p in $(cat "$dir/pids"); do
        while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$p" 2>/dev/null
    done
    rm -f "$dir/pids"
}

# A TCP port nobody listens on (from /proc/net/tcp's hex local ports).
free_port() {
    while :; do
        p=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 20000 ))
        hex=$(printf ':%04X ' "$p")
        grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$p"; return; }
    done
}

fail() {
    echo "cluster.sh: $*" >&2
    for f in "$dir"/log/*.log; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
    done
    cluster_stop "$dir"
    exit 1
}

case $1 in
stop) cluster_stop "$2"; exit 0 ;;
start) ;;
*) echo "usage: cluster.sh start DIR [PID] | stop DIR" >&2; exit 2 ;;
esac

dir=$2 watch=${3:-}
for t in munged mungekey slurmctld slurmd sinfo sbatch squeue scancel; do
    command -v $t >/dev/null 2>&1 ||
        { echo "cluster.sh: $t not found: make deps installs slurm-wlm and munge" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "cluster.sh: the Slurm test runs slurmd, which needs root" >&2; exit 1; }
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || exit 1
chmod 700 "$dir/munge"
: >"$dir/pids"

# munge: its own key and socket (not the machine's).
[ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" ||
    fail "cannot make a munge key"
munged --foreground --force --socket="$dir/munge/munge.sock" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    </dev/null >/dev/null 2>&1 &
echo $! >>"$dir/pids"
i=0
until munge -n -S "$dir/munge/munge.sock" </dev/null >/dev/null 2>&1; do
    [ $i -lt 100 ] || fail "munged did not start"
    sleep 0.1; i=$((i + 1))
done

mem=$(awk '/^MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
sed -e "s|@DIR@|$dir|g" -e "s|@CPUS@|$(nproc)|" -e "s|@MEM@|$mem|" \
    -e "s|@CTLD_PORT@|$(free_port)|" -e "s|@SLURMD_PORT@|$(free_port)|" \
    "$here/slurm.conf.in" >"$dir/slurm.conf" || fail "cannot write slurm.conf"
SLURM_CONF=$dir/slurm.conf
export SLURM_CONF

# Foreground daemons started here, so their process ids are known.
slurmctld -D -c -f "$SLURM_CONF" </dev/null >"$dir/log/slurmctld.out" 2>&1 &
echo $! >>"$dir/pids"
slurmd -D -N localhost -f "$SLURM_CONF" </dev/null >"$dir/log/slurmd.out" 2>&1 &
echo $! >>"$dir/pids"

if [ -n "$watch" ]; then
    # Stop the cluster if the test runner dies without stopping it.
    (
        while kill -0 "$watch" 2>/dev/null && [ -s "$dir/pids" ]; do sleep 1; done
        cluster_stop "$dir"
    ) </dev/null >/dev/null 2>&1 &
fi

# Up to a minute by the clock, not by tries: sinfo itself waits for a
# controller it cannot reach (slurmd without a name for it had kept this
# loop going for over ten minutes, 300 tries of a slow sinfo).
end=$(($(date +%s) + 60))
until [ "$(timeout 10 sinfo -h -o %t 2>/dev/null)" = idle ]; do
    [ "$(date +%s)" -lt "$end" ] ||
        fail "the node did not become idle in a minute: $(timeout 10 sinfo -h -o '%t %E' 2>&1)"
    for p in $(cat "$dir/pids"); do kill -0 "$p" 2>/dev/null || fail "a daemon ($p) exited"; done
    sleep 0.1
done
exit 0
