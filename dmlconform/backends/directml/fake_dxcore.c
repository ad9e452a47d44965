/* A tiny stand-in for WSL's libdxcore.so, written for dmlconform.
 *
 * libdirectml.so (Linux/WSL build) looks the D3D12 device's adapter up by LUID
 * through DXCore before it creates an IDMLDevice: DXCoreCreateAdapterFactory,
 * IDXCoreAdapterFactory::GetAdapterByLuid, then IDXCoreAdapter::GetProperty /
 * GetPropertySize for HardwareID, DriverDescription, IsIntegrated and
 * DriverVersion.  This library answers those calls for one fake adapter, so
 * DMLCreateDevice succeeds on a machine without a GPU and IDMLDevice can
 * validate operator descs.  It never executes anything.
 *
 * System V x86-64 calling convention (the WSL headers make STDMETHODCALLTYPE
 * empty); vtable order and property numbers from dxcore_interface.h facts
 * (../shared/directml-abi/com.md section 9).  Compiled at run time with
 * `cc -shared -fPIC -o libdxcore.so fake_dxcore.c`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int32_t HRESULT;
#define S_OK ((HRESULT)0)
#define E_NOINTERFACE ((HRESULT)0x80004002u)
#define E_POINTER ((HRESULT)0x80004003u)
#define E_INVALIDARG ((HRESULT)0x80070057u)
#define E_NOTIMPL ((HRESULT)0x80004001u)

typedef struct { uint32_t d1; uint16_t d2, d3; uint8_t d4[8]; } GUID;
typedef struct { uint32_t low; int32_t high; } LUID;

enum { PROP_INSTANCE_LUID = 0, PROP_DRIVER_VERSION = 1, PROP_DRIVER_DESCRIPTION = 2, PROP_HARDWARE_ID = 3,
       PROP_DEDICATED_ADAPTER_MEMORY = 7, PROP_DEDICATED_SYSTEM_MEMORY = 8, PROP_SHARED_SYSTEM_MEMORY = 9,
       PROP_IS_HARDWARE = 11, PROP_IS_INTEGRATED = 12, PROP_IS_DETACHABLE = 13 };

static const char DESCRIPTION[] = "dmlconform fake adapter (no GPU; validation only)";
static const uint32_t HARDWARE_ID[4] = {0x1414u, 0x008Cu, 0u, 0u}; /* vendor, device, subsys, revision */
static const uint64_t DRIVER_VERSION = 0x0001000D00000000ull;      /* 1.13.0.0 */
static const uint64_t MEMORY = 1ull << 30;
static LUID last_luid;
static unsigned calls;

typedef struct Object { void **vtbl; } Object;

static HRESULT qi(Object *self, const GUID *riid, void **out) {
    (void)riid;
    if (!out) return E_POINTER;
    *out = NULL;
    (void)self;
    return E_NOINTERFACE;
}
static uint32_t add_ref(Object *self) { (void)self; return 1; }
static uint32_t release(Object *self) { (void)self; return 1; }
static HRESULT not_implemented(Object *self) { (void)self; return E_NOTIMPL; }

/* ---- IDXCoreAdapter: 0 QI, 1 AddRef, 2 Release, 3 IsValid, 4 IsAttributeSupported,
 *      5 IsPropertySupported, 6 GetProperty, 7 GetPropertySize, 8..12 state queries, factory */
static size_t property_size(uint32_t property) {
    switch (property) {
    case PROP_INSTANCE_LUID: return sizeof(LUID);
    case PROP_DRIVER_VERSION: case PROP_DEDICATED_ADAPTER_MEMORY: case PROP_DEDICATED_SYSTEM_MEMORY:
    case PROP_SHARED_SYSTEM_MEMORY: return sizeof(uint64_t);
    case PROP_DRIVER_DESCRIPTION: return sizeof(DESCRIPTION);
    case PROP_HARDWARE_ID: return sizeof(HARDWARE_ID);
    case PROP_IS_HARDWARE: case PROP_IS_INTEGRATED: case PROP_IS_DETACHABLE: return 1;
    default: return 0;
    }
}

static _Bool is_valid(Object *self) { (void)self; return 1; }
static _Bool attribute_supported(Object *self, const GUID *attribute) { (void)self; (void)attribute; return 1; }
static _Bool property_supported(Object *self, uint32_t property) { (void)self; return property_size(property) != 0; }

static HRESULT get_property_size(Object *self, uint32_t property, size_t *size) {
    (void)self;
    calls++;
    if (!size) return E_POINTER;
    *size = property_size(property);
    return *size ? S_OK : E_INVALIDARG;
}

static HRESULT get_property(Object *self, uint32_t property, size_t size, void *data) {
    (void)self;
    calls++;
    size_t need = property_size(property);
    if (!need || !data) return E_INVALIDARG;
    if (size < need) return E_INVALIDARG;
    memset(data, 0, size);
    switch (property) {
    case PROP_INSTANCE_LUID: memcpy(data, &last_luid, sizeof last_luid); break;
    case PROP_DRIVER_VERSION: memcpy(data, &DRIVER_VERSION, sizeof DRIVER_VERSION); break;
    case PROP_DRIVER_DESCRIPTION: memcpy(data, DESCRIPTION, sizeof DESCRIPTION); break;
    case PROP_HARDWARE_ID: memcpy(data, HARDWARE_ID, sizeof HARDWARE_ID); break;
    case PROP_DEDICATED_ADAPTER_MEMORY: case PROP_DEDICATED_SYSTEM_MEMORY: case PROP_SHARED_SYSTEM_MEMORY:
        memcpy(data, &MEMORY, sizeof MEMORY); break;
    case PROP_IS_HARDWARE: *(uint8_t *)data = 1; break;
    default: break; /* IsIntegrated, IsDetachable: false */
    }
    return S_OK;
}

static void *adapter_vtbl[13] = {
    (void *)qi, (void *)add_ref, (void *)release, (void *)is_valid, (void *)attribute_supported,
    (void *)property_supported, (void *)get_property, (void *)get_property_size, (void *)not_implemented,
    (void *)not_implemented, (void *)not_implemented, (void *)not_implemented, (void *)not_implemented,
};
static Object adapter = {adapter_vtbl};

/* ---- IDXCoreAdapterFactory: 0 QI, 1 AddRef, 2 Release, 3 CreateAdapterList, 4 GetAdapterByLuid, 5..7 */
static HRESULT get_adapter_by_luid(Object *self, const LUID *luid, const GUID *riid, void **out) {
    (void)self; (void)riid;
    calls++;
    if (!out) return E_POINTER;
    if (luid) last_luid = *luid;
    *out = &adapter;
    return S_OK;
}

static void *factory_vtbl[8] = {
    (void *)qi, (void *)add_ref, (void *)release, (void *)not_implemented, (void *)get_adapter_by_luid,
    (void *)not_implemented, (void *)not_implemented, (void *)not_implemented,
};
static Object factory = {factory_vtbl};

HRESULT DXCoreCreateAdapterFactory(const GUID *riid, void **out) {
    (void)riid;
    calls++;
    if (!out) return E_POINTER;
    *out = &factory;
    return S_OK;
}

/* For the tests: how many DXCore calls libdirectml.so made. */
unsigned dmlconform_fake_dxcore_calls(void) { return calls; }
