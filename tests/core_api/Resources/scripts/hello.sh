#!/bin/sh
echo hello "$1"
