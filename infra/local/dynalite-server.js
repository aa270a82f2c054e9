#!/usr/bin/env node
// Starts dynalite (its own command line, same arguments) so that a client giving up on a request does
// not stop the emulator. dynalite rethrows a request's 'error' event ("aborted", ECONNRESET) from inside
// its handler, which ends the Node.js process: a client timeout while the emulator is slow (or frozen
// by a chaos test) then kills DynamoDB for every later caller, which real DynamoDB never does.
'use strict'

function clientGaveUp (err) {
  return err && (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'aborted')
}

process.on('uncaughtException', function (err) {
  if (clientGaveUp(err)) {
    console.error('dynalite: a client closed its connection mid-request (' + (err.code || err.message) + '); still serving')
    return
  }
  console.error(err && err.stack ? err.stack : err)
  process.exit(1)
})

require('dynalite/cli.js')
