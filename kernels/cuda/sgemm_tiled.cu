// sgemm_tiled.cu - f32 matmul / linear on CUDA with shared-memory tiles.
//
// C = op(A) * op(B) (+ bias broadcast along rows), A: MxK, B: KxN, C: MxN,
// every operand of rank 1 or 2 with any strides (a vector A is one row, a
// vector B one column). A block of 256 threads computes 64x64 tiles of C
// (each thread a 4x4 block in registers), staging 64x16 slices of A and
// 16x64 slices of B in shared memory; blocks walk the tiles grid-stride, so
// any grid size is correct. The same algorithm as kernels/vulkan/
// sgemm_tiled.comp.
//
// Library dispatch ABI (docs/artifact-format.md): pointers to the first
// elements of A, B, bias, C (without a bias, C stands in and is not read),
// then the parameter words: flags (1 transpose A, 2 transpose B, 4 add the
// bias), the four ranks, then per binding its element offset, sizes and
// strides.

namespace {

constexpr int kTile = 64;
constexpr int kDepth = 16;

struct Matrix {
  int offset, rows, cols, rowStride, colStride;
};

__device__ Matrix readMatrix(const int *params, int &word, int rank, bool column) {
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

__device__ void transpose(Matrix &m) {
  int t = m.rows;
  m.rows = m.cols;
  m.cols = t;
  t = m.rowStride;
  m.rowStride = m.colStride;
  m.colStride = t;
}

} // namespace

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled(const float *a, const float *b, const float *bias, float *c,
            const int *params) {
  __shared__ float tileA[kDepth][kTile];
  __shared__ float tileB[kDepth][kTile];
  int flags = params[0];
  bool hasBias = (flags & 4) != 0;
  int word = 5;
  Matrix A = readMatrix(params, word, params[1], false);
  Matrix B = readMatrix(params, word, params[2], true);
  Matrix biasM = readMatrix(params, word, params[3], false);
  Matrix C = readMatrix(params, word, params[4], params[1] == 2);
  if (flags & 1)
    transpose(A);
  if (flags & 2)
    transpose(B);
  int M = C.rows, N = C.cols, K = A.cols;
  int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  int tilesN = (N + kTile - 1) / kTile;
  int tiles = ((M + kTile - 1) / kTile) * tilesN;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int row0 = (tile / tilesN) * kTile, col0 = (tile % tilesN) * kTile;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += kDepth) {
      for (int l = 0; l < 4; ++l) { // 1024 elements of each slice, 4 per thread.
        int e = tid + 256 * l;
        int ar = e / kDepth, ak = e % kDepth, i = row0 + ar, k = k0 + ak;
        tileA[ak][ar] = i < M && k < K ? a[A.offset + i * A.rowStride + k * A.colStride] : 0.0f;
        int bk = e / kTile, bc = e % kTile, j = col0 + bc;
        k = k0 + bk;
        tileB[bk][bc] = k < K && j < N ? b[B.offset + k * B.rowStride + j * B.colStride] : 0.0f;
      }
      __syncthreads();
      for (int k = 0; k < kDepth; ++k) {
        float av[4], bv[4];
        for (int i = 0; i < 4; ++i)
          av[i] = tileA[k][ty * 4 + i];
        for (int j = 0; j < 4; ++j)
          bv[j] = tileB[k][tx * 4 + j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      int r = row0 + ty * 4 + i;
      for (int j = 0; j < 4; ++j) {
        int col = col0 + tx * 4 + j;
        if (r < M && col < N)
          c[C.offset + r * C.rowStride + col * C.colStride] =
              acc[i][j] + (hasBias ? bias[biasM.offset + col * biasM.colStride] : 0.0f);
      }
    }
  }
}
