//===- ApproximateMath.cpp - Polynomial math for every target --------------===//

#include "ApproximateMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace {
struct ApproximateMathPass
    : mlir::PassWrapper<ApproximateMathPass,
                        mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::populateMathPolynomialApproximationPatterns(patterns);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct SignedPowf : mlir::OpRewritePattern<mlir::math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::math::PowFOp op,
                                      mlir::PatternRewriter &rw) const override {
    using namespace mlir;
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    Type type = a.getType();
    auto constant = [&](double v) -> Value {
      return arith::ConstantOp::create(rw, loc, rw.getFloatAttr(type, v));
    };
    auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
      return arith::CmpFOp::create(rw, loc, p, x, y);
    };
    auto select = [&](Value c, Value x, Value y) -> Value {
      return arith::SelectOp::create(rw, loc, c, x, y);
    };
    Value magnitude = math::ExpOp::create(
        rw, loc, arith::MulFOp::create(rw, loc, b,
                                       math::LogOp::create(rw, loc, math::AbsFOp::create(rw, loc, a))));
    Value integral = cmp(arith::CmpFPredicate::OEQ, math::FloorOp::create(rw, loc, b), b);
    Value half = arith::MulFOp::create(rw, loc, b, constant(0.5));
    Value odd = arith::AndIOp::create(
        rw, loc, integral,
        cmp(arith::CmpFPredicate::ONE, math::FloorOp::create(rw, loc, half), half));
    Value negative = cmp(arith::CmpFPredicate::OLT, a, constant(0));
    Value result = select(arith::AndIOp::create(rw, loc, negative, odd),
                          arith::NegFOp::create(rw, loc, magnitude), magnitude);
    Value notIntegral = arith::XOrIOp::create(
        rw, loc, integral, arith::ConstantOp::create(rw, loc, rw.getBoolAttr(true)));
    result = select(arith::AndIOp::create(rw, loc, negative, notIntegral),
                    constant(std::numeric_limits<double>::quiet_NaN()), result);
    result = select(cmp(arith::CmpFPredicate::OEQ, b, constant(0)), constant(1), result);
    rw.replaceOp(op, result);
    return success();
  }
};

struct ExpandPowfPass
    : mlir::PassWrapper<ExpandPowfPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandPowfPass)
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<SignedPowf>(&getContext());
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<mlir::Pass> fuel::codegen::createExpandPowfPass() {
  return std::make_unique<ExpandPowfPass>();
}

std::unique_ptr<mlir::Pass> fuel::codegen::createApproximateMathPass() {
  return std::make_unique<ApproximateMathPass>();
}
