#!/bb/busybox sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /init of the lab's guest (built into the initramfs by tests/lab/lab.sh):
# loads the RDMA modules, puts rxe0 on dummy0 and siw0 on dummy1, mounts
# the shared repository at its host path, runs the command the host left in
# /lab/run/cmd.sh from there, prints RDMARW-LAB-EXIT=<status> and powers off.
/bb/busybox --install -s /bb
export PATH=/usr/bin:/usr/sbin:/bb
export HOME=/root LD_LIBRARY_PATH=
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /root /dev/pts /dev/shm
mount -t tmpfs tmpfs /dev/shm

fail() {
	echo "lab-guest: $*"
	echo "RDMARW-LAB-EXIT=125"
	poweroff -f
}

# In dependency order (lab.sh: modprobe --show-depends), siw.ko among them.
for m in $(cat /lab/modules); do
	insmod "/lab/ko/$m.ko" || fail "insmod $m"
done
# The kernel NVMe-oF target's namespace (make lab-bench): one 128 MiB ramdisk.
insmod /lab/ko/brd.ko rd_nr=1 rd_size=131072 || fail "insmod brd"
mount -t configfs configfs /sys/kernel/config 2>/dev/null
# The guest has no DMI uuid for nvme-cli to derive the host's identity from.
mkdir -p /etc/nvme
hostid=$(cat /proc/sys/kernel/random/uuid)
echo "nqn.2014-08.org.nvmexpress:uuid:$hostid" >/etc/nvme/hostnqn
echo "$hostid" >/etc/nvme/hostid

share=$(sed -n 's/.*lab\.share=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p "$share" /lab/run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 repo "$share" ||
	fail "mount the repository"
mount -t 9p -o trans=virtio,version=9p2000.L,ro run /lab/run ||
	fail "mount the run folder"

# Busybox runs its own applets first: name iproute2's ip by path.
IP=/usr/bin/ip
$IP link set lo up
[ -e /sys/class/net/dummy0 ] || $IP link add dummy0 type dummy
[ -e /sys/class/net/dummy1 ] || $IP link add dummy1 type dummy
$IP addr add 10.11.12.1/24 dev dummy0
$IP addr add 10.11.13.1/24 dev dummy1
$IP link set dummy0 up
$IP link set dummy1 up
/usr/bin/rdma link add rxe0 type rxe netdev dummy0 || fail "rxe0"
/usr/bin/rdma link add siw0 type siw netdev dummy1 || fail "siw0"
ulimit -l unlimited
export RDMARW_LAB=1 LAB_RXE_ADDR=10.11.12.1 LAB_SIW_ADDR=10.11.13.1

cd "$share" || fail "cd $share"
# The host tells a boot that died before this line from a failed command.
echo "RDMARW-LAB-START"
sh /lab/run/cmd.sh
rc=$?
sync
echo "RDMARW-LAB-EXIT=$rc"
poweroff -f
