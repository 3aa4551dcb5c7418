#pragma once
/* Deliberately NOT #include <systemd/sd-daemon.h>: it pulls <sys/socket.h> into this module
 * and Swift then assigns SOCK_STREAM and friends to CSystemd instead of Glibc
 * (../shared/SWIFT-LINUX.md, pitfall 1). Only the prototypes photod calls are declared. */
#include <stdint.h>
#include <stddef.h>
int sd_notify(int unset_environment, const char *state);
int sd_listen_fds(int unset_environment);
int sd_watchdog_enabled(int unset_environment, uint64_t *usec);
int sd_booted(void);
#define SD_LISTEN_FDS_START 3
