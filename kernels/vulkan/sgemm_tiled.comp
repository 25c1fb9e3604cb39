// sgemm_tiled.comp - f32 matmul / linear on Vulkan with shared-memory tiles.
//
// C = op(A) * op(B) (+ bias broadcast along rows), A: MxK, B: KxN, C: MxN,
// every operand rank 2 with any strides. A workgroup of 256 threads computes
// 64x64 tiles of C (each thread a 4x4 block in registers), staging 64x16
// slices of A and 16x64 slices of B in shared memory; workgroups walk the
// tiles grid-stride, so any grid size is correct.
//
// Dispatch ABI (include/fuel/Codegen/GpuKernels.h): bindings A, B, bias, C
// (without a bias, C is bound in its place and not read), then the
// parameter words: the flags (1 transpose A, 2 transpose B, 4 add the
// bias), then per binding its element offset, sizes and strides.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer ABuffer { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { float b[]; };
layout(std430, set = 0, binding = 2) readonly buffer BiasBuffer { float bias[]; };
layout(std430, set = 0, binding = 3) buffer CBuffer { float c[]; };
layout(std430, set = 0, binding = 4) readonly buffer Params { int params[]; };

const int kTile = 64;
const int kDepth = 16;

shared float tileA[kDepth][kTile];
shared float tileB[kDepth][kTile];

void main() {
  // The flags, then blocks: A and B (5 words each), the bias (3 words at
  // rank 1, 5 when C stands in), C.
  int flags = params[0];
  bool transA = (flags & 1) != 0, transB = (flags & 2) != 0;
  bool hasBias = (flags & 4) != 0;
  int cBlock = 11 + (hasBias ? 3 : 5);
  int offA = params[1], a0 = params[4], a1 = params[5];
  int offB = params[6], b0 = params[9], b1 = params[10];
  int offBias = params[11], biasStride = hasBias ? params[13] : 0;
  int offC = params[cBlock], c0 = params[cBlock + 3], c1 = params[cBlock + 4];
  int M = params[cBlock + 1], N = params[cBlock + 2];
  int K = transA ? params[2] : params[3];
  // Element (i, k) of op(A) and (k, j) of op(B).
  int aRow = transA ? a1 : a0, aCol = transA ? a0 : a1;
  int bRow = transB ? b1 : b0, bCol = transB ? b0 : b1;

  int tid = int(gl_LocalInvocationID.x);
  int tilesN = (N + kTile - 1) / kTile;
  int tiles = ((M + kTile - 1) / kTile) * tilesN;
  int tx = tid % 16, ty = tid / 16;
  for (int tile = int(gl_WorkGroupID.x); tile < tiles; tile += int(gl_NumWorkGroups.x)) {
    int row0 = (tile / tilesN) * kTile, col0 = (tile % tilesN) * kTile;
    float acc[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        acc[i][j] = 0.0;
    for (int k0 = 0; k0 < K; k0 += kDepth) {
      // 1024 elements of each slice, 4 per thread; zeros outside.
      for (int l = 0; l < 4; ++l) {
        int e = tid + 256 * l;
        int ar = e / kDepth, ak = e % kDepth;
        int i = row0 + ar, k = k0 + ak;
        tileA[ak][ar] = (i < M && k < K) ? a[offA + i * aRow + k * aCol] : 0.0;
        int bk = e / kTile, bc = e % kTile;
        int j = col0 + bc;
        k = k0 + bk;
        tileB[bk][bc] = (k < K && j < N) ? b[offB + k * bRow + j * bCol] : 0.0;
      }
      barrier();
      for (int k = 0; k < kDepth; ++k) {
        float av[4], bv[4];
        for (int i = 0; i < 4; ++i)
          av[i] = tileA[k][ty * 4 + i];
        for (int j = 0; j < 4; ++j)
          bv[j] = tileB[k][tx * 4 + j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            acc[i][j] = fma(av[i], bv[j], acc[i][j]);
      }
      barrier();
    }
    for (int i = 0; i < 4; ++i) {
      int r = row0 + ty * 4 + i;
      for (int j = 0; j < 4; ++j) {
        int col = col0 + tx * 4 + j;
        if (r < M && col < N)
          c[offC + r * c0 + col * c1] =
              acc[i][j] + (hasBias ? bias[offBias + col * biasStride] : 0.0);
      }
    }
  }
}
