// Authorize popup of the development identity provider (served as a file: the app's CSP
// allows no inline scripts). The server puts the result in <meta name="nb-idp-result">;
// this hands it to the window that opened the popup, like Google's popup does.
(function () {
  'use strict';
  function meta(name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute('content') : null;
  }
  // The opener is the app at this popup's own origin (development answers at localhost and
  // 127.0.0.1 alike): only a window of that origin receives the answer.
  var target = window.location.origin;

  function deliver(message) {
    if (window.opener && target) {
      // The opener (our gsi/client script) closes this window once it has the message.
      window.opener.postMessage(message, target);
    } else {
      var status = document.getElementById('status');
      if (status) status.textContent = 'No opener window: start the sign-in from the app.';
    }
  }

  var result = meta('nb-idp-result');
  if (result) deliver(JSON.parse(result));

  var cancel = document.getElementById('cancel');
  if (cancel) {
    cancel.addEventListener('click', function () {
      var message = { error: 'access_denied', error_description: 'The user cancelled the sign-in.' };
      var state = meta('nb-idp-state');
      if (state) message.state = state;
      deliver(message);
    });
  }
})();
