/* Root's audit record as pam_keygate.so appends to it without starting keygate-pam-helper:
   one line in /var/log/keygate/gatekeeper.log (GatekeeperPaths.auditPath, GateAuditFile), only
   where the record is as root's writer leaves it and the line needs no rotation. Everything
   else (a folder or file that is not root's alone, a link, a record past its bound, a process
   that is not root) answers -1, and the module leaves the whole step to the helper, whose
   GateAuditFile checks, repairs and rotates. Opening before acting means that a step done
   here always has its line. The line itself is built by the module (ModuleRecord.swift). */
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEYGATE_RECORD_FOLDER "/var/log/keygate"
#define KEYGATE_RECORD_PATH KEYGATE_RECORD_FOLDER "/gatekeeper.log"
/* GateAuditFile.maxBytes: past it the helper rotates the file. */
#define KEYGATE_RECORD_MAX_BYTES (1L << 20)

/* The record, opened for appending `length` more bytes: a descriptor, or -1 (leave it to the
   helper). The folder is made 0700 when missing, as GateAuditFile makes it; it must be a real
   folder of root's that nobody else can write, and the file a regular file of root's, 0600,
   with one link, that `length` more bytes keep within its bound. */
static inline int keygate_open_record(long length) {
    if (geteuid() != 0) return -1;
    if (mkdir(KEYGATE_RECORD_FOLDER, 0700) != 0 && errno != EEXIST) return -1;
    struct stat info;
    if (lstat(KEYGATE_RECORD_FOLDER, &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != 0 ||
        (info.st_mode & 022) != 0) {
        return -1;
    }
    int fd = open(KEYGATE_RECORD_PATH, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
    if (fd < 0) return -1;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != 0 || info.st_nlink != 1 ||
        (info.st_mode & 077) != 0 || info.st_size + length > KEYGATE_RECORD_MAX_BYTES) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The time now as the record writes it, "2026-12-06T05:10:03Z" (20 bytes and a NUL, into
   `out`): 0, or -1 when the clock cannot be read. */
static inline int keygate_record_time(char out[32]) {
    time_t now = time(NULL);
    struct tm parts;
    if (now == (time_t)-1 || gmtime_r(&now, &parts) == NULL) return -1;
    return strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &parts) == 20 ? 0 : -1;
}
