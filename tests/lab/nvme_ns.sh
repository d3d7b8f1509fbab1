# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Sourced by tests/lab/nvmeof.sh and nvmeof-bench.sh (in the lab's guest).
#
# nvme_ns_dev NQN: the block device of the first namespace of the connected
# subsystem NQN (e.g. nvme0n1), found through /sys/class/nvme-subsystem;
# waits up to 10 s for it to appear, fails after that.
nvme_ns_dev() {
	local s n

	for _ in $(seq 50); do
		for s in /sys/class/nvme-subsystem/nvme-subsys*; do
			grep -qx "$1" "$s/subsysnqn" 2>/dev/null || continue
			for n in "$s"/nvme*n*; do
				[ -e "$n" ] || continue
				n=${n##*/}
				[ -b "/dev/$n" ] && echo "$n" && return 0
			done
		done
		sleep 0.2
	done
	return 1
}
