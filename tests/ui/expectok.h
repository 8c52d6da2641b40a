// Document operations return the engine's std::optional<Error> (nullopt = done; see
// ui/core/document.h): QVERIFY_OK expects one to succeed and prints the error's message
// when it did not.
#pragma once

#include <QtTest>

#define QVERIFY_OK(expr)                                                                           \
    do {                                                                                           \
        const auto tsError_ = (expr);                                                              \
        QVERIFY2(!tsError_, tsError_ ? tsError_->message.c_str() : "");                            \
    } while (false)
