// CRC32C (Castagnoli) of bytes in device memory.
//
// Bytes fetched over TCP into GPU memory are checked where they land, on the GPU, instead of
// by the CPU as they pass through the pinned chunk: on the H200 the CPU's check was what kept
// the fetch under the raw socket's rate (docs/benchmarks.md, issue 3), while the GPU does it
// in microseconds beside the next chunk's copy. Checking in device memory also covers the
// copy over PCIe.
//
// Built into src/main/resources/io/gpudirect/gpu/crc32c.ptx by dev/build-ptx; CI has no CUDA
// compiler, so the PTX is committed next to this source.
//
// The method: thread s takes the s-th run of SEGMENT bytes counted from the END of the data
// and computes its raw CRC (register starting at 0, no final inversion). A raw CRC is linear,
// so the raw CRC of the whole is the XOR of each segment's, each multiplied by x^(8m) modulo
// the polynomial, m being the bytes that follow the segment: exactly s * SEGMENT, because the
// segments are counted from the end. The standard CRC then adds the initial register
// (0xFFFFFFFF, shifted over all n bytes) and the final inversion. The XOR is summed within
// each warp, then once per warp into *result, which the caller zeroes first.

#include <stdint.h>

#define POLY 0x82F63B78u // the Castagnoli polynomial, bit-reflected as the CRC is
#define SEGMENT 256      // bytes per thread: enough warps for a 4 MiB chunk to fill the GPU

// x^(2^k) modulo the polynomial, k = 0..39: enough for any n below 2^36 bytes.
__constant__ uint32_t X2N[40] = {
    0x40000000u, 0x20000000u, 0x08000000u, 0x00800000u, 0x00008000u, 0x82f63b78u,
    0x6ea2d55cu, 0x18b8ea18u, 0x510ac59au, 0xb82be955u, 0xb8fdb1e7u, 0x88e56f72u,
    0x74c360a4u, 0xe4172b16u, 0x0d65762au, 0x35d73a62u, 0x28461564u, 0xbf455269u,
    0xe2ea32dcu, 0xfe7740e6u, 0xf946610bu, 0x3c204f8fu, 0x538586e3u, 0x59726915u,
    0x734d5309u, 0xbc1ac763u, 0x7d0722ccu, 0xd289cabeu, 0xe94ca9bcu, 0x05b74f3fu,
    0xa51e1f42u, 0x40000000u, 0x20000000u, 0x08000000u, 0x00800000u, 0x00008000u,
    0x82f63b78u, 0x6ea2d55cu, 0x18b8ea18u, 0x510ac59au,
};

// a * b modulo the polynomial (bit 31 is x^0). a must not be 0: powers of x never are.
__device__ static uint32_t mult_mod_p(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) {
        break;
      }
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
  }
  return p;
}

// x^(8n) modulo the polynomial: the factor that moves a CRC past n more bytes.
__device__ static uint32_t x8n_mod_p(uint64_t n) {
  uint32_t p = 1u << 31;
  for (int k = 3; n != 0; n >>= 1, k++) {
    if (n & 1) {
      p = mult_mod_p(X2N[k], p);
    }
  }
  return p;
}

// Launch with 256 threads per block and at least ceil(n / SEGMENT) threads; *result must be 0.
extern "C" __global__ void crc32c(const uint8_t *data, uint64_t n, uint32_t *result) {
  __shared__ uint32_t table[256];
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
    uint32_t c = i;
    for (int b = 0; b < 8; b++) {
      c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
    }
    table[i] = c;
  }
  __syncthreads();

  uint64_t segments = (n + SEGMENT - 1) / SEGMENT;
  uint64_t s = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t v = 0;
  if (s < segments) {
    uint64_t end = n - s * SEGMENT;
    uint64_t start = end > SEGMENT ? end - SEGMENT : 0;
    uint32_t c = 0;
    for (uint64_t i = start; i < end; i++) {
      c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    }
    v = s == 0 ? c : mult_mod_p(x8n_mod_p(s * SEGMENT), c);
    if (s == segments - 1) {
      // The thread with the first byte adds the initial register and the final inversion.
      v ^= mult_mod_p(x8n_mod_p(n), 0xFFFFFFFFu) ^ 0xFFFFFFFFu;
    }
  }
  for (int lane = 16; lane > 0; lane >>= 1) {
    v ^= __shfl_xor_sync(0xFFFFFFFFu, v, lane);
  }
  if ((threadIdx.x & 31) == 0 && v != 0) {
    atomicXor(result, v);
  }
}
