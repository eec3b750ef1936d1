#!/usr/bin/env bash
# Usage: scripts/git-lfs.sh ensure
#
# Makes sure the git-lfs client is installed: the LFS tests drive the real
# client. Debian's git-lfs package is the only source of it on these
# machines; when `git lfs` is missing (a fresh machine, running as root as
# CI does) it is installed with apt-get. Without root it only reports.
set -euo pipefail

ensure() {
	if git lfs version >/dev/null 2>&1; then
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "git-lfs.sh: git-lfs is missing and installing it needs root (apt-get install git-lfs)" >&2
		exit 1
	fi
	echo "git-lfs.sh: git lfs is missing; installing Debian's git-lfs package" >&2
	export DEBIAN_FRONTEND=noninteractive
	# Concurrent callers (parallel test binaries) wait for one another.
	exec 9>/tmp/repohost-git-lfs-install.lock
	flock 9
	if git lfs version >/dev/null 2>&1; then
		return 0
	fi
	apt-get install -y -qq git-lfs >/dev/null 2>&1 || {
		apt-get update -qq
		apt-get install -y -qq git-lfs >/dev/null
	}
	if ! git lfs version >/dev/null 2>&1; then
		echo "git-lfs.sh: installing git-lfs did not provide 'git lfs'" >&2
		exit 1
	fi
}

case "${1:-}" in
ensure) ensure ;;
*)
	echo "usage: $0 ensure" >&2
	exit 2
	;;
esac
