/* libd3d12.so for the real libdirectml.so on plain Linux: the hand-written half.
 *
 * libdirectml.so (the Linux build for WSL) calls D3D12 objects through
 * vtables with the System V calling convention.  vkd3d implements D3D12 on
 * Vulkan, but its methods use the Microsoft x64 convention (ms_abi) even on
 * Linux.  So every vkd3d object handed to DirectML is wrapped in a proxy whose
 * vtable holds plain C functions that forward to vkd3d's ms_abi methods.
 *
 * The build (dmlconform/backends/directml/linux_stack.py) concatenates this
 * file with the proxies generated from vkd3d's own vkd3d_d3d12.h
 * (bridge_gen.py) and compiles them as one translation unit.  The generated
 * part provides bridge_ifaces[] (one entry per interface, ending with a NULL
 * name) and uses the helpers below.
 *
 * A real object has at most one live proxy: DirectML compares interface
 * pointers, so handing out two proxies for one object would break identity.
 * The proxy's vtable is the deepest interface of a single line of descent
 * (ID3D12Device9 for a device asked for as ID3D12Device): vtables of one line
 * share their prefix, so any interface of the line can call through it.  A
 * proxy is forgotten when its object's last reference is released, so a
 * freed address reused by another object gets a fresh proxy.
 *
 * BRIDGE_TRACE=1 in the environment logs every call to stderr.
 */
#define INITGUID
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <vkd3d_windows.h>
#include <vkd3d_d3d12.h>
#include <vkd3d_d3dcommon.h>

struct bridge_iface {
    const char *name;
    const IID *iid;
    void *const *vtbl;
    int index;          /* position in bridge_ifaces */
    int wrap_as;        /* index of the deepest interface of its line of descent */
    uint64_t ancestors; /* bit i set: derives from bridge_ifaces[i] (itself included) */
};

struct bridge_proxy {
    void *const *vtbl;  /* first: what the caller dereferences */
    void *real;         /* the vkd3d object (NULL: a free slot) */
    const struct bridge_iface *iface;
};

extern const struct bridge_iface bridge_ifaces[];

#define BRIDGE_POOL 65536
static struct bridge_proxy bridge_pool[BRIDGE_POOL];
static size_t bridge_high;  /* slots ever used */
static pthread_mutex_t bridge_lock = PTHREAD_MUTEX_INITIALIZER;
static int bridge_tracing = -1;

static void bridge_trace(const char *what) {
    if (bridge_tracing < 0)
        bridge_tracing = getenv("BRIDGE_TRACE") != NULL;
    if (bridge_tracing)
        fprintf(stderr, "[bridge] %s\n", what);
}

static int bridge_derives(const struct bridge_iface *y, const struct bridge_iface *x) {
    return (y->ancestors >> x->index) & 1;
}

static const struct bridge_iface *bridge_by_iid(const IID *riid) {
    for (const struct bridge_iface *i = bridge_ifaces; i->name; i++)
        if (!memcmp(i->iid, riid, sizeof(IID)))
            return i;
    return NULL;
}

/* The real object behind a proxy; anything else passes through unchanged. */
static void *bridge_unwrap(const void *p) {
    const struct bridge_proxy *x = p;
    if (x >= bridge_pool && x < bridge_pool + BRIDGE_POOL)
        return x->real;
    return (void *)p;
}

static struct bridge_proxy *bridge_slot(void *real) {
    struct bridge_proxy *free_slot = NULL;
    for (size_t k = 0; k < bridge_high; k++) {
        if (bridge_pool[k].real == real)
            return &bridge_pool[k];
        if (!bridge_pool[k].real && !free_slot)
            free_slot = &bridge_pool[k];
    }
    if (!free_slot && bridge_high < BRIDGE_POOL)
        free_slot = &bridge_pool[bridge_high++];
    return free_slot;
}

/* The proxy of `real` as interface `riid`; NULL (and `real` released) when no
 * proxy can be made, so the caller answers E_NOINTERFACE. */
static void *bridge_wrap(void *real, const IID *riid) {
    if (!real)
        return NULL;
    const struct bridge_iface *asked = bridge_by_iid(riid);
    if (!asked) {
        bridge_trace("no proxy for an interface outside vkd3d_d3d12.h; released");
        ((IUnknown *)real)->lpVtbl->Release((IUnknown *)real);
        return NULL;
    }
    const struct bridge_iface *as = &bridge_ifaces[asked->wrap_as];
    pthread_mutex_lock(&bridge_lock);
    struct bridge_proxy *p = bridge_slot(real);
    if (p && !p->real) {
        p->real = real;
        p->iface = as;
        p->vtbl = as->vtbl;
    } else if (p && p->iface != as && bridge_derives(as, p->iface)) {
        p->iface = as;  /* first seen as a base (ID3D12Pageable), now as a derived one */
        p->vtbl = as->vtbl;
    }
    pthread_mutex_unlock(&bridge_lock);
    if (!p) {
        fprintf(stderr, "[bridge] more than %d live D3D12 objects\n", BRIDGE_POOL);
        ((IUnknown *)real)->lpVtbl->Release((IUnknown *)real);
    }
    return p;
}

/* Pipeline states vkd3d refused to create (the shader it could not
 * translate, mostly): the backend reads the count around CompileOperator to
 * tell a translation failure from any other. */
static long bridge_pipeline_failed;

static void bridge_pipeline_result(HRESULT hr) {
    if (FAILED(hr))
        __atomic_add_fetch(&bridge_pipeline_failed, 1, __ATOMIC_SEQ_CST);
}

long bridge_pipeline_failures(void) __attribute__((visibility("default")));
long bridge_pipeline_failures(void) {
    return __atomic_load_n(&bridge_pipeline_failed, __ATOMIC_SEQ_CST);
}

/* Release reached zero: the slot is free again. */
static void bridge_forget(struct bridge_proxy *p) {
    pthread_mutex_lock(&bridge_lock);
    p->real = NULL;
    p->iface = NULL;
    pthread_mutex_unlock(&bridge_lock);
}

static void bridge_unwrap_barriers(D3D12_RESOURCE_BARRIER *dst, const D3D12_RESOURCE_BARRIER *src, UINT n) {
    for (UINT k = 0; k < n; k++) {
        dst[k] = src[k];
        switch (dst[k].Type) {
        case D3D12_RESOURCE_BARRIER_TYPE_TRANSITION:
            dst[k].Transition.pResource = bridge_unwrap(dst[k].Transition.pResource);
            break;
        case D3D12_RESOURCE_BARRIER_TYPE_ALIASING:
            dst[k].Aliasing.pResourceBefore = bridge_unwrap(dst[k].Aliasing.pResourceBefore);
            dst[k].Aliasing.pResourceAfter = bridge_unwrap(dst[k].Aliasing.pResourceAfter);
            break;
        case D3D12_RESOURCE_BARRIER_TYPE_UAV:
            dst[k].UAV.pResource = bridge_unwrap(dst[k].UAV.pResource);
            break;
        }
    }
}

/* Bytes of one pipeline-state stream subobject: its type, then its payload,
 * padded to pointer alignment (the D3D12 stream layout). */
#define BRIDGE_SUBOBJECT(T) \
    sizeof(struct { D3D12_PIPELINE_STATE_SUBOBJECT_TYPE type; T payload; } __attribute__((aligned(sizeof(void *)))))

/* A copy of a pipeline-state stream whose root signature is vkd3d's; the
 * compute subobjects DirectML uses are known, another type ends the walk. */
static void *bridge_unwrap_stream(D3D12_PIPELINE_STATE_STREAM_DESC *desc) {
    char *copy = malloc(desc->SizeInBytes ? desc->SizeInBytes : 1);
    if (!copy)
        return NULL;
    memcpy(copy, desc->pPipelineStateSubobjectStream, desc->SizeInBytes);
    for (size_t off = 0; off + sizeof(D3D12_PIPELINE_STATE_SUBOBJECT_TYPE) <= desc->SizeInBytes;) {
        D3D12_PIPELINE_STATE_SUBOBJECT_TYPE type;
        memcpy(&type, copy + off, sizeof type);
        size_t size;
        switch (type) {
        case D3D12_PIPELINE_STATE_SUBOBJECT_TYPE_ROOT_SIGNATURE: {
            void **root = (void **)(copy + off + sizeof(void *));
            *root = bridge_unwrap(*root);
            size = BRIDGE_SUBOBJECT(void *);
            break;
        }
        case D3D12_PIPELINE_STATE_SUBOBJECT_TYPE_CS: size = BRIDGE_SUBOBJECT(D3D12_SHADER_BYTECODE); break;
        case D3D12_PIPELINE_STATE_SUBOBJECT_TYPE_NODE_MASK: size = BRIDGE_SUBOBJECT(UINT); break;
        case D3D12_PIPELINE_STATE_SUBOBJECT_TYPE_CACHED_PSO: size = BRIDGE_SUBOBJECT(D3D12_CACHED_PIPELINE_STATE); break;
        case D3D12_PIPELINE_STATE_SUBOBJECT_TYPE_FLAGS: size = BRIDGE_SUBOBJECT(D3D12_PIPELINE_STATE_FLAGS); break;
        default:
            fprintf(stderr, "[bridge] pipeline-state subobject type %d is not handled\n", (int)type);
            size = desc->SizeInBytes;
            break;
        }
        off += size;
    }
    desc->pPipelineStateSubobjectStream = copy;
    return copy;
}

/* ------------------------------------------------------------ the exports */
static void *bridge_utils(const char *symbol) {
    static void *handle;
    if (!handle)
        handle = dlopen("libvkd3d-utils.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "[bridge] %s\n", dlerror());
        return NULL;
    }
    return dlsym(handle, symbol);
}

typedef HRESULT (__stdcall *bridge_create_fn)(IUnknown *, D3D_FEATURE_LEVEL, REFIID, void **);
typedef HRESULT (__stdcall *bridge_serialize_fn)(const D3D12_ROOT_SIGNATURE_DESC *, D3D_ROOT_SIGNATURE_VERSION,
                                                 ID3DBlob **, ID3DBlob **);
typedef HRESULT (__stdcall *bridge_serialize_v_fn)(const D3D12_VERSIONED_ROOT_SIGNATURE_DESC *, ID3DBlob **,
                                                   ID3DBlob **);

static void bridge_wrap_blobs(ID3DBlob **blob, ID3DBlob **error) {
    if (blob && *blob)
        *blob = bridge_wrap(*blob, &IID_ID3D10Blob);
    if (error && *error)
        *error = bridge_wrap(*error, &IID_ID3D10Blob);
}

/* The System V entry points (the __asm__ names are the exported ones). */
HRESULT bridge_create_device(IUnknown *adapter, D3D_FEATURE_LEVEL level, REFIID riid, void **out)
    __asm__("D3D12CreateDevice");
HRESULT bridge_create_device(IUnknown *adapter, D3D_FEATURE_LEVEL level, REFIID riid, void **out) {
    bridge_create_fn create = (bridge_create_fn)bridge_utils("D3D12CreateDevice");
    if (!create)
        return E_FAIL;
    void *real = NULL;
    HRESULT hr = create(bridge_unwrap(adapter), level, riid, out ? &real : NULL);
    if (out) {
        *out = SUCCEEDED(hr) ? bridge_wrap(real, riid) : NULL;
        if (SUCCEEDED(hr) && !*out)
            hr = E_NOINTERFACE;
    }
    return hr;
}

HRESULT bridge_serialize(const D3D12_ROOT_SIGNATURE_DESC *desc, D3D_ROOT_SIGNATURE_VERSION version, ID3DBlob **blob,
                         ID3DBlob **error) __asm__("D3D12SerializeRootSignature");
HRESULT bridge_serialize(const D3D12_ROOT_SIGNATURE_DESC *desc, D3D_ROOT_SIGNATURE_VERSION version, ID3DBlob **blob,
                         ID3DBlob **error) {
    bridge_serialize_fn serialize = (bridge_serialize_fn)bridge_utils("D3D12SerializeRootSignature");
    if (!serialize)
        return E_FAIL;
    HRESULT hr = serialize(desc, version, blob, error);
    bridge_wrap_blobs(blob, error);
    return hr;
}

HRESULT bridge_serialize_versioned(const D3D12_VERSIONED_ROOT_SIGNATURE_DESC *desc, ID3DBlob **blob,
                                   ID3DBlob **error) __asm__("D3D12SerializeVersionedRootSignature");
HRESULT bridge_serialize_versioned(const D3D12_VERSIONED_ROOT_SIGNATURE_DESC *desc, ID3DBlob **blob,
                                   ID3DBlob **error) {
    bridge_serialize_v_fn serialize = (bridge_serialize_v_fn)bridge_utils("D3D12SerializeVersionedRootSignature");
    if (!serialize)
        return E_FAIL;
    HRESULT hr = serialize(desc, blob, error);
    bridge_wrap_blobs(blob, error);
    return hr;
}

/* ------------------------------------------------------------ generated proxies follow */
