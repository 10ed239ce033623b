/* A stand-in libnvidia-ml.so.1 for tests, built by tests/probes/test_nvml_child.py in tmp_path
 * (never installed anywhere). The real pynvml loads it like the driver's library. Its init
 * behaves as FAKE_NVML_MODE says: ok (two H100s), segv, abort, exit (_exit(42)), hang, or
 * interrupt: write its pid to FAKE_NVML_PIDFILE, send SIGINT to its parent (a user's Ctrl-C, at
 * the moment NVML hangs whatever the load; tests/test_startup.py), create FAKE_NVML_SENT, hang.
 * Issue 13 item 3: such an init used to end fp8-doctor with no report. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned long long total, free, used; } mem_t;
static int handles[2];

int nvmlInitWithFlags(unsigned int flags) {
    const char *mode = getenv("FAKE_NVML_MODE");
    (void)flags;
    if (mode && !strcmp(mode, "segv")) { volatile int *p = 0; *p = 1; }
    if (mode && !strcmp(mode, "abort")) abort();
    if (mode && !strcmp(mode, "exit")) _exit(42);
    if (mode && !strcmp(mode, "hang")) sleep(600);
    if (mode && !strcmp(mode, "interrupt")) {
        const char *pidfile = getenv("FAKE_NVML_PIDFILE"), *sent = getenv("FAKE_NVML_SENT");
        FILE *f = pidfile ? fopen(pidfile, "w") : NULL;
        if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
        if (kill(getppid(), SIGINT) == 0 && sent) close(open(sent, O_CREAT | O_WRONLY, 0600));
        sleep(600);
    }
    return 0;
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { (void)r; return "fake NVML error"; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 12040; return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return 0; }
int nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
    strncpy(buf, "550.54.15", len); return 0;
}
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { *h = &handles[i % 2]; return 0; }
static int index_of(void *h) { return h == &handles[1]; }
int nvmlDeviceGetName(void *h, char *buf, unsigned int len) {
    (void)h; strncpy(buf, "NVIDIA H100 80GB HBM3", len); return 0;
}
int nvmlDeviceGetUUID(void *h, char *buf, unsigned int len) {
    strncpy(buf, index_of(h) ? "GPU-11111111-2222-3333-4444-555555555555"
                             : "GPU-00000000-2222-3333-4444-555555555555", len);
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) {
    (void)h; m->total = 81559ULL << 20; m->free = m->total; m->used = 0; return 0;
}
int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor) {
    (void)h; *major = 9; *minor = 0; return 0;
}
int nvmlDeviceGetMigMode(void *h, unsigned int *cur, unsigned int *pend) {
    (void)h; (void)cur; (void)pend; return 3; /* NVML_ERROR_NOT_SUPPORTED */
}
