//===- main.cpp - Catch2 entry point for fuel-unittests -------------------===//
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
