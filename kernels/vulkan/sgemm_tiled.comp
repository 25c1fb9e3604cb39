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
// parameter words: flags (1 transpose A, 2 transpose B, 4 add the bias),
// the ranks of the four bindings, then per binding its element offset,
// sizes and strides. A vector A (rank 1) is one row, a vector B one column.
#version 450

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer ABuffer { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { float b[]; };
layout(std430, set = 0, binding = 2) readonly buffer BiasBuffer { float biasData[]; };
layout(std430, set = 0, binding = 3) buffer CBuffer { float c[]; };
layout(std430, set = 0, binding = 4) readonly buffer Params { int params[]; };

const int kTile = 64;
const int kDepth = 16;

shared float tileA[kDepth][kTile];
shared float tileB[kDepth][kTile];

/// A binding as a matrix: element offset, rows, columns, row and column
/// strides. A rank-1 binding is one row, or one column when `column`.
struct Matrix {
  int offset, rows, cols, rowStride, colStride;
};

Matrix readMatrix(inout int word, int rank, bool column) {
  Matrix m;
  m.offset = params[word];
  if (rank == 2) {
    m.rows = params[word + 1];
    m.cols = params[word + 2];
    m.rowStride = params[word + 3];
    m.colStride = params[word + 4];
  } else if (column) {
    m.rows = params[word + 1];
    m.cols = 1;
    m.rowStride = params[word + 2];
    m.colStride = 0;
  } else {
    m.rows = 1;
    m.cols = params[word + 1];
    m.rowStride = 0;
    m.colStride = params[word + 2];
  }
  word += 1 + 2 * rank;
  return m;
}

void main() {
  int flags = params[0];
  bool transA = (flags & 1) != 0, transB = (flags & 2) != 0;
  bool hasBias = (flags & 4) != 0;
  int word = 5;
  Matrix A = readMatrix(word, params[1], false);
  Matrix B = readMatrix(word, params[2], true);
  Matrix bias = readMatrix(word, params[3], false);
  // A vector C is a row of a vector A's product, else a column.
  Matrix C = readMatrix(word, params[4], params[1] == 2);
  if (transA) {
    int t = A.rows; A.rows = A.cols; A.cols = t;
    t = A.rowStride; A.rowStride = A.colStride; A.colStride = t;
  }
  if (transB) {
    int t = B.rows; B.rows = B.cols; B.cols = t;
    t = B.rowStride; B.rowStride = B.colStride; B.colStride = t;
  }
  int M = C.rows, N = C.cols, K = A.cols;
  int offA = A.offset, aRow = A.rowStride, aCol = A.colStride;
  int offB = B.offset, bRow = B.rowStride, bCol = B.colStride;
  int offC = C.offset, c0 = C.rowStride, c1 = C.colStride;
  int offBias = bias.offset, biasStride = hasBias ? bias.colStride : 0;

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
              acc[i][j] + (hasBias ? biasData[offBias + col * biasStride] : 0.0);
      }
    }
  }
}
